"""An assistant: the official MCP Python SDK client in a session with `tether mcp`, shared by the
editor suites. `tether mcp` attaches to the editor's `tether lsp` when it is given the same
XDG_RUNTIME_DIR."""

import asyncio
import concurrent.futures
import os
import pathlib
import threading

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PATIENCE = 30.0


def text_of_sdk(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


class Assistant:
    """An MCP SDK client session with `tether mcp`, run on its own thread and event loop, so that
    the test's thread stays free to drive the editor (pynvim runs an event loop of its own)."""

    def __init__(self, tether_bin: str, root: pathlib.Path, runtime: pathlib.Path):
        env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), TETHER_LOG="warn")
        self.params = StdioServerParameters(command=tether_bin, args=["mcp", "--root", str(root)], env=env)
        self.ready = concurrent.futures.Future()
        # The progress notifications the server sent for any call: (progress, message).
        self.progress = []
        self.loop = None
        self.queue = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self.thread.start()
        self.ready.result(PATIENCE)

    async def _main(self):
        try:
            self.loop = asyncio.get_running_loop()
            self.queue = asyncio.Queue()
            with open(os.devnull, "w") as devnull:
                async with stdio_client(self.params, errlog=devnull) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        self.ready.set_result(True)
                        while (item := await self.queue.get()) is not None:
                            tool, arguments, answer = item
                            try:
                                answer.set_result(
                                    await session.call_tool(tool, arguments, progress_callback=self._progressed)
                                )
                            except Exception as e:  # handed to the test's thread
                                answer.set_exception(e)
        except Exception as e:
            if not self.ready.done():
                self.ready.set_exception(e)
            raise

    async def _progressed(self, progress, total, message):
        self.progress.append((progress, message))

    def call(self, tool: str, **arguments):
        return self.call_async(tool, **arguments).result(PATIENCE)

    def call_async(self, tool: str, **arguments) -> concurrent.futures.Future:
        """Starts a tool call; the future holds its result."""
        answer = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (tool, arguments, answer))
        return answer

    def close(self):
        self.loop.call_soon_threadsafe(self.queue.put_nowait, None)
        self.thread.join(PATIENCE)
