"""Clients the benches drive tether with over stdio: a language client (`tether lsp`) and an MCP
client (`tether mcp`), Python's standard library only."""

import json
import pathlib
import subprocess
import threading


class Lsp:
    """A language client over stdio: requests answered by id, server requests answered by
    `on_request` (a function of the message giving the result), else `null`."""

    def __init__(self, argv: list[str], cwd: pathlib.Path, env: dict, on_request=None):
        self.on_request = on_request
        # The reader thread answers the server's requests while the main thread sends its own.
        self.write_lock = threading.Lock()
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.answers: dict[int, dict] = {}
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(out.read(length))
            if "method" in message and "id" in message:
                result = self.on_request(message) if self.on_request else None
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "id" in message:
                with self.cond:
                    self.answers[message["id"]] = message
                    self.cond.notify_all()

    def _send(self, message: dict):
        body = json.dumps(message).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: dict):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    @staticmethod
    def encode(method: str, params: dict) -> bytes:
        """A notification's bytes, to be sent later with `write`."""
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def write(self, data: bytes):
        with self.write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def request(self, method: str, params) -> dict:
        self.next_id += 1
        key = self.next_id
        self._send({"jsonrpc": "2.0", "id": key, "method": method, "params": params})
        with self.cond:
            self.cond.wait_for(lambda: key in self.answers, timeout=300)
            answer = self.answers.pop(key)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def rss_mib(self) -> float:
        for line in pathlib.Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def round_trip(self):
        self.request("workspace/executeCommand", {"command": "tether.listTools", "arguments": []})

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", {})
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001  (a bench that is ending)
            self.proc.kill()


class Mcp:
    """A `tether mcp` session over stdio (newline-delimited JSON-RPC)."""

    def __init__(self, argv: list[str], env: dict):
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "tether-bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def start(self, method: str, params: dict) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def answer(self, key: int) -> dict:
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("tether mcp exited")
            message = json.loads(line)
            if message.get("id") == key and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{message['error']}")
                return message["result"]

    def request(self, method: str, params: dict) -> dict:
        return self.answer(self.start(method, params))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
