"""A scripted model on loopback, for running the real assistant CLIs headless in tests.

It serves the Anthropic Messages API (`POST /v1/messages`, streamed or not, the way Claude Code
calls it through `ANTHROPIC_BASE_URL`) and the Gemini API (`POST /v1beta/models/M:streamGenerateContent`,
server-sent events, the way Gemini CLI calls it through `GOOGLE_GEMINI_BASE_URL`) and the OpenAI
Responses API (`POST /v1/responses`, server-sent events, the way Codex CLI calls a custom
`model_providers` entry; a turn `{"tool": "apply_patch", "input": PATCH}` is its freeform custom tool
call, any other tool a function call): each request that
offers tools gets the next turn of the script, a tool call or a closing text; a request without
tools (a side request: a title, a summary, Gemini CLI's model router) gets a short text and does
not advance the script. Every request is kept, so that a test can read what the CLI told the
model (the tool results)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ModelStub:
    """`turns`: a list of `{"tool": NAME, "input": {...}}` or `{"text": "..."}`; after the last,
    every request gets "done"."""

    def __init__(self, turns: list[dict], prompt: str | None = None):
        """With `prompt`, only a conversation holding that text is scripted, and its turn is the
        number of tool results in it (an interactive CLI sends other requests with tools
        besides); every other request gets a short text."""
        self.turns = list(turns)
        self.prompt = prompt
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.startswith("/v1/models"):
                    self._json({"data": [{"id": "claude-stub", "type": "model", "display_name": "stub"}],
                                "has_more": False})
                else:
                    self._json({"type": "error", "error": {"type": "not_found_error", "message": self.path}}, 404)

            def do_HEAD(self):
                self.send_response(200)
                self.end_headers()

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.startswith("/v1/messages/count_tokens"):
                    self._json({"input_tokens": 100})
                    return
                if self.path.startswith("/v1beta/models/"):
                    self._gemini(body)
                    return
                if self.path.startswith("/v1/responses"):
                    self._responses(body)
                    return
                if not self.path.startswith("/v1/messages"):
                    self._json({"type": "error", "error": {"type": "not_found_error", "message": self.path}}, 404)
                    return
                turn = stub._next(body)
                if body.get("stream"):
                    self._stream(turn)
                else:
                    self._json(stub._message(turn))

            def _gemini(self, body):
                method = self.path.split("?")[0].rsplit(":", 1)[-1]
                if method == "countTokens":
                    self._json({"totalTokens": 100})
                    return
                if method != "streamGenerateContent":
                    # The router asks which model to use, in a JSON answer of a schema of its own.
                    choice = json.dumps({"complexity_reasoning": "scripted", "complexity_score": 10})
                    self._json(stub._gemini_message({"text": choice}))
                    return
                turn = stub._next(dict(body, tools=body.get("tools")))
                data = f"data: {json.dumps(stub._gemini_message(turn))}\r\n\r\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _responses(self, body):
                turn = stub._next(body)
                n = len(stub.requests)
                if turn.get("tool") == "apply_patch":
                    item = {"type": "custom_tool_call", "id": f"ctc_{n}", "status": "completed", "call_id": f"call_{n:04d}",
                            "name": "apply_patch", "input": turn["input"]}
                elif "tool" in turn:
                    item = {"type": "function_call", "id": f"fc_{n}", "status": "completed", "call_id": f"call_{n:04d}",
                            "name": turn["tool"], "arguments": json.dumps(turn["input"])}
                else:
                    item = {"type": "message", "id": f"msg_{n}", "status": "completed", "role": "assistant",
                            "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]}
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

                def event(kind, data):
                    self.wfile.write(f"event: {kind}\ndata: {json.dumps(dict(data, type=kind))}\n\n".encode())
                    self.wfile.flush()

                rid = f"resp_{n:04d}"
                event("response.created", {"response": {"id": rid, "object": "response", "status": "in_progress",
                                                        "output": []}})
                event("response.output_item.added", {"output_index": 0, "item": item})
                event("response.output_item.done", {"output_index": 0, "item": item})
                usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}
                event("response.completed", {"response": {"id": rid, "object": "response", "status": "completed",
                                                          "output": [item], "usage": usage}})

            def _json(self, value, status=200):
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, turn):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                message = stub._message(turn)
                block = message["content"][0]

                def event(kind, data):
                    self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()

                start = dict(message, content=[], stop_reason=None)
                event("message_start", {"type": "message_start", "message": start})
                if block["type"] == "tool_use":
                    event("content_block_start", {"type": "content_block_start", "index": 0,
                                                  "content_block": dict(block, input={})})
                    delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                else:
                    event("content_block_start", {"type": "content_block_start", "index": 0,
                                                  "content_block": {"type": "text", "text": ""}})
                    delta = {"type": "text_delta", "text": block["text"]}
                event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
                event("content_block_stop", {"type": "content_block_stop", "index": 0})
                event("message_delta", {"type": "message_delta",
                                        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                        "usage": {"output_tokens": 10}})
                event("message_stop", {"type": "message_stop"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.served = 0

    def _next(self, body: dict) -> dict:
        with self.lock:
            self.requests.append(body)
            if not body.get("tools"):
                return {"text": "tether"}
            if self.prompt is not None:
                text = json.dumps(body.get("messages", []))
                if self.prompt not in text:
                    return {"text": "tether"}
                done = text.count('"type": "tool_result"')
                return self.turns[done] if done < len(self.turns) else {"text": "done"}
            turn = self.turns[self.served] if self.served < len(self.turns) else {"text": "done"}
            self.served += 1
            return turn

    def _message(self, turn: dict) -> dict:
        n = len(self.requests)
        if "tool" in turn:
            content = [{"type": "tool_use", "id": f"toolu_{n:04d}", "name": turn["tool"], "input": turn["input"]}]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": turn["text"]}]
            stop = "end_turn"
        return {"id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": "claude-stub",
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 100, "output_tokens": 10}}

    @staticmethod
    def _gemini_message(turn: dict) -> dict:
        part = {"functionCall": {"name": turn["tool"], "args": turn["input"]}} if "tool" in turn else {"text": turn["text"]}
        return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}}

    def tool_results(self) -> list[str]:
        """The text of every tool result the CLI sent back, in order (each once)."""
        seen: list[str] = []
        for body in self.requests:
            for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
                if isinstance(item, dict) and item.get("type", "").endswith("_call_output"):
                    text = str(item.get("output"))
                    if text not in seen:
                        seen.append(text)
            for content in body.get("contents", []):
                for part in content.get("parts", []):
                    response = part.get("functionResponse", {}).get("response")
                    if response is None:
                        continue
                    text = "ERROR: " + str(response["error"]) if "error" in response else str(response.get("output"))
                    if text not in seen:
                        seen.append(text)
            for message in body.get("messages", []):
                if message.get("role") != "user" or not isinstance(message.get("content"), list):
                    continue
                for block in message["content"]:
                    if block.get("type") != "tool_result":
                        continue
                    content = block.get("content")
                    if isinstance(content, list):
                        content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
                    text = ("ERROR: " if block.get("is_error") else "") + str(content)
                    if text not in seen:
                        seen.append(text)
        return seen

    def close(self):
        self.server.shutdown()
        self.server.server_close()
