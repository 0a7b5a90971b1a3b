-- End to end: the strict handler refuses an edit whose second document changed meanwhile, and
-- tether retries on the new text and succeeds.
local H = require("helpers")

if not H.bin() then
  H.skip("retry", "TETHER_BIN is not set")
  H.finish()
end

H.setup()
local ws = H.workspace({ ["a.txt"] = "a1\na2\n", ["b.txt"] = "b1\nb2\n" })

local PATCH = [[
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
-a1
+A1
 a2
--- a/b.txt
+++ b/b.txt
@@ -1,2 +1,2 @@
-b1
+B1
 b2
]]

H.test("a stale second TextDocumentEdit is refused, and tether retries and succeeds", function()
  local a = H.open(ws .. "/a.txt")
  local b, client = H.open(ws .. "/b.txt")
  local strict = client.handlers["workspace/applyEdit"]
  local answers, typed_in = {}, nil ---@type table[], integer?
  -- The first time tether sends its edit, the user types in the document listed second, just
  -- before the edit is handled: that document's version no longer matches.
  client.handlers["workspace/applyEdit"] = function(err, params, ctx)
    local changes = params.edit.documentChanges or {}
    if #answers == 0 and #changes >= 2 then
      typed_in = vim.uri_to_bufnr(changes[2].textDocument.uri)
      vim.api.nvim_buf_set_lines(typed_in, -1, -1, false, { "typed by the user" })
    end
    local answer = strict(err, params, ctx)
    table.insert(answers, answer)
    return answer
  end
  local result = require("tether").call("apply_patch", { patch = PATCH })
  client.handlers["workspace/applyEdit"] = strict
  H.eq(false, result.isError, "isError: " .. require("tether").text(result))
  H.truthy(typed_in, "the first edit listed two documents")
  H.eq(false, answers[1].applied, "first answer")
  H.truthy(answers[1].failureReason:find(vim.uri_from_bufnr(typed_in), 1, true), answers[1].failureReason)
  H.eq(true, answers[#answers].applied, "last answer")
  H.truthy(#answers >= 2, "tether retried")
  local a_text = typed_in == a and "A1\na2\ntyped by the user" or "A1\na2"
  local b_text = typed_in == b and "B1\nb2\ntyped by the user" or "B1\nb2"
  H.eq(a_text, H.text(a), "a.txt buffer")
  H.eq(b_text, H.text(b), "b.txt buffer")
  H.eq(true, vim.bo[typed_in].modified, "the buffer the user typed in stays unsaved")
end)

H.finish()
