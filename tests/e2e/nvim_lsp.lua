-- End-to-end check with a real client: Neovim's built-in LSP client drives `staticfx lsp`
-- over stdio. Run through tests/e2e/run_nvim.sh (it sets STATICFX_BIN and STATICFX_FIXTURE).
local bin = assert(os.getenv('STATICFX_BIN'), 'STATICFX_BIN not set')
local fixture = assert(os.getenv('STATICFX_FIXTURE'), 'STATICFX_FIXTURE not set')
local TIMEOUT = 60000

local function fail(msg)
  io.stderr:write('FAIL: ' .. msg .. '\n')
  vim.cmd('cquit 1')
end

local function check(cond, msg)
  if not cond then fail(msg) end
end

local function find_line(buf, needle)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local col = l:find(needle, 1, true)
    if col then return i - 1, col - 1 end
  end
  fail('fixture lacks ' .. needle)
end

local function run()
  local dir = vim.fs.dirname(fixture)
  vim.cmd.edit(fixture)
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start({
    name = 'staticfx',
    cmd = { bin, 'lsp' },
    root_dir = dir,
    init_options = { exampleInputs = { SimpleNet = { x = { 1, 784 } } }, debounceMs = 0 },
  }, { bufnr = buf })
  check(client_id, 'vim.lsp.start failed')
  local client = vim.lsp.get_client_by_id(client_id)
  check(vim.wait(TIMEOUT, function() return client.initialized end, 20), 'server did not initialize')
  print('position encoding: ' .. client.offset_encoding)

  -- 1. Diagnostics on open, including an analysis limit at Information severity.
  local function limit()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == 'FX902' then return d end
    end
  end
  check(vim.wait(TIMEOUT, function() return limit() ~= nil end, 20), 'no FX902 diagnostic: ' .. vim.inspect(vim.diagnostic.get(buf)))
  check(limit().severity == vim.diagnostic.severity.INFO, 'FX902 should be INFO')
  print('diagnostics: ' .. #vim.diagnostic.get(buf))

  -- 2. Hover a shape: `h` in `out = self.fc2(h)`.
  local line, col = find_line(buf, 'out = self.fc2(h)')
  vim.api.nvim_win_set_cursor(0, { line + 1, col + #'out = self.fc2(' })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local resp = client:request_sync('textDocument/hover', params, TIMEOUT, buf)
  check(resp and resp.result, 'no hover: ' .. vim.inspect(resp))
  local hover = resp.result.contents.value
  check(hover:find('[1, 128]', 1, true), 'hover lacks the shape: ' .. hover)
  print('hover: ' .. hover:gsub('\n', ' '))

  -- 3. Edit in the editor (incremental sync after multi-byte text): defining the missing
  -- name removes the limit.
  local cls = find_line(buf, 'class SimpleNet')
  vim.api.nvim_buf_set_lines(buf, cls, cls, false, { 'def not_defined_anywhere(t):  # é😀', '    return t', '', '' })
  check(vim.wait(TIMEOUT, function() return limit() == nil end, 20), 'FX902 still reported after the edit')

  -- 4. showGraph, checked by Graphviz.
  local uri = vim.uri_from_bufnr(buf)
  resp = client:request_sync('workspace/executeCommand', { command = 'staticfx.showGraph', arguments = { { uri = uri, class = 'SimpleNet' } } }, TIMEOUT, buf)
  check(resp and resp.result and resp.result.dot, 'showGraph failed: ' .. vim.inspect(resp))
  local dot = resp.result.dot
  check(dot:find('[1, 128]', 1, true), 'DOT lacks shapes')
  local out = vim.system({ 'dot', '-Tsvg' }, { stdin = dot }):wait()
  check(out.code == 0 and out.stdout:find('<svg', 1, true), 'dot rejected the graph: ' .. (out.stderr or ''))
  print('showGraph: ' .. resp.result.name .. ', ' .. #out.stdout .. ' bytes of SVG')

  -- 5. The torch.where quick fix for the data-dependent branch, applied the way `:lua
  -- vim.lsp.buf.code_action()` applies it.
  local function branch()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == 'FX101' then return d end
    end
  end
  check(vim.wait(TIMEOUT, function() return branch() ~= nil end, 20), 'no FX101 diagnostic')
  local d = branch()
  local range = {
    start = { line = d.lnum, character = d.col },
    ['end'] = { line = d.end_lnum, character = d.end_col },
  }
  resp = client:request_sync('textDocument/codeAction', {
    textDocument = { uri = uri },
    range = range,
    context = { diagnostics = { d.user_data.lsp }, only = { 'quickfix' } },
  }, TIMEOUT, buf)
  check(resp and resp.result, 'no code actions: ' .. vim.inspect(resp))
  local action
  for _, a in ipairs(resp.result) do
    if a.isPreferred then action = a end
  end
  check(action and action.title:find('torch.where', 1, true), 'no preferred torch.where action: ' .. vim.inspect(resp.result))
  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  check(text:find('h = torch.where(h.sum() > 0, h * 2, h)', 1, true), 'buffer after the fix:\n' .. text)
  check(vim.wait(TIMEOUT, function() return branch() == nil end, 20), 'FX101 still reported after the fix')
  print('code action: ' .. action.title)

  client:stop()
  print('OK')
end

local ok, err = pcall(run)
if not ok then fail(tostring(err)) end
vim.cmd('qall!')
