-- tether.await: a request handler inside a coroutine (as Neovim 0.11 runs them) yields until its
-- answer is in; called from the main thread it waits with vim.wait; either way bounded.
local H = require("helpers")
local await = require("tether.await")

H.test("inside a coroutine it yields, and the coroutine ends with the answer", function()
  local finish, answer
  local co = coroutine.create(function()
    answer = { await.run(function(done)
      finish = done
    end, 5000) }
  end)
  H.truthy(coroutine.resume(co), "started")
  H.eq("suspended", coroutine.status(co), "the handler gave the loop back")
  -- The answer arrives later, from the main loop; the coroutine is resumed on a later turn.
  vim.schedule(function()
    finish("result", nil)
  end)
  H.wait(function()
    return coroutine.status(co) == "dead"
  end, "the coroutine to end")
  H.eq({ "result" }, answer)
end)

H.test("the answer is what done was given, also when done is called at once", function()
  local co = coroutine.wrap(function()
    return await.run(function(done)
      done(1, 2)
    end, 100)
  end)
  H.eq({ 1, 2 }, { co() })
end)

H.test("from the main thread it waits with vim.wait, and gives up after the timeout", function()
  local a, b = await.run(function(done)
    vim.defer_fn(function()
      done("late")
    end, 50)
  end, 2000)
  H.eq({ "late", nil }, { a, b })
  local started = vim.uv.now()
  local r, err = await.run(function() end, 100)
  H.eq({ nil, "timeout" }, { r, err })
  H.truthy(vim.uv.now() - started < 1000, "bounded")
end)

H.test("inside a coroutine a missing answer times out too", function()
  local result = {}
  local co = coroutine.create(function()
    result = { await.run(function() end, 100) }
  end)
  coroutine.resume(co)
  H.wait(function()
    return coroutine.status(co) == "dead"
  end, "the timeout")
  H.eq({ nil, "timeout" }, result)
end)

H.finish()
