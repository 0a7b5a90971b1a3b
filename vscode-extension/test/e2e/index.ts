// The entry VS Code loads as `extensionTestsPath`: runs the Mocha suites in the extension host
// and writes the results to $TETHER_TEST_RESULTS for the runner (scripts/run-e2e.mjs), which
// cannot see this process's console.

import * as fs from "node:fs";
import * as path from "node:path";

import Mocha from "mocha";
import * as vscode from "vscode";

interface Outcome {
  title: string;
  ms?: number;
  error?: string;
}

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: "bdd", timeout: 180_000, color: false, reporter: "dot" });
  if (process.env.TETHER_TEST_SUITE === "bench") {
    // The measurements alone (scripts/run-e2e.mjs --bench).
    mocha.addFile(path.join(__dirname, "bench.test.js"));
  } else if (process.env.TETHER_TEST_ONLY !== undefined) {
    // One suite by its file's name (`install`), while working on it.
    mocha.addFile(path.join(__dirname, `${process.env.TETHER_TEST_ONLY}.test.js`));
  } else {
    // In this order, in one window: the knowledge suite's TypeScript project comes after the rest
    // but the install suite's.
    mocha.addFile(path.join(__dirname, "extension.test.js"));
    mocha.addFile(path.join(__dirname, "review.test.js"));
    mocha.addFile(path.join(__dirname, "journal.test.js"));
    mocha.addFile(path.join(__dirname, "disk.test.js"));
    mocha.addFile(path.join(__dirname, "assistants.test.js"));
    mocha.addFile(path.join(__dirname, "knowledge.test.js"));
    // Last: it moves the bundled binary aside and restarts the server with fakes.
    mocha.addFile(path.join(__dirname, "install.test.js"));
  }
  // The runner checks the version against the VS Code it started.
  const results = {
    vscode: vscode.version,
    passed: [] as Outcome[],
    failed: [] as Outcome[],
    skipped: [] as Outcome[],
  };
  await new Promise<void>((resolve) => {
    const runner = mocha.run(() => {
      resolve();
    });
    runner.on("pass", (t) => results.passed.push({ title: t.fullTitle(), ms: t.duration ?? 0 }));
    runner.on("pending", (t) => results.skipped.push({ title: t.fullTitle() }));
    runner.on("fail", (t, err: unknown) =>
      results.failed.push({
        title: t.fullTitle(),
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      }),
    );
  });
  const file = process.env.TETHER_TEST_RESULTS;
  if (file !== undefined) {
    fs.writeFileSync(file, JSON.stringify(results));
  }
  if (results.failed.length > 0) {
    throw new Error(`${results.failed.length} tests failed`);
  }
}
