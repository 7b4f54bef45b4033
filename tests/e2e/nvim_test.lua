-- Headless test of the Neovim plugin (editors/nvim) with a real Neovim 0.11 and the real
-- `staticfx lsp`. Run through tests/e2e/run_nvim.sh, which sets STATICFX_BIN,
-- STATICFX_FIXTURE and STATICFX_PLUGIN. Prints `SKIP: <step>: <reason>` for steps the server
-- cannot support yet; any failed check exits non-zero.
local bin = assert(os.getenv('STATICFX_BIN'), 'STATICFX_BIN not set')
local fixture = assert(os.getenv('STATICFX_FIXTURE'), 'STATICFX_FIXTURE not set')
local plugin = assert(os.getenv('STATICFX_PLUGIN'), 'STATICFX_PLUGIN not set')
local TIMEOUT = 60000

local function fail(msg)
  io.stderr:write('FAIL: ' .. msg .. '\n')
  vim.cmd('cquit 1')
end

local function check(cond, msg)
  if not cond then
    error(msg, 2)
  end
end

local function log(msg)
  io.stdout:write(msg .. '\n')
end

local function find_line(buf, needle)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local col = l:find(needle, 1, true)
    if col then
      return i - 1, col - 1
    end
  end
  error('fixture lacks ' .. needle)
end

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local function diag(buf, code)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code then
      return d
    end
  end
end

local function float_wins()
  local out = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then
      table.insert(out, w)
    end
  end
  return out
end

local function run()
  -- 1. Load the plugin as a plugin manager would.
  vim.opt.rtp:prepend(plugin)
  vim.cmd('filetype on')
  vim.cmd.runtime('plugin/staticfx.lua')
  check(vim.fn.exists(':StaticFxGraph') == 2 and vim.fn.exists(':StaticFxRun') == 2, 'plugin commands missing')

  -- Without `cmd`: the activated venv's staticfx, then PATH's, else one message saying how to
  -- install (and nothing registered).
  do
    local staticfx = require('staticfx')
    local saved_path, saved_venv = vim.env.PATH, vim.env.VIRTUAL_ENV
    local root = vim.fn.tempname()
    local venv, other = vim.fs.joinpath(root, 'venv'), vim.fs.joinpath(root, 'tools')
    vim.fn.mkdir(vim.fs.joinpath(venv, 'bin'), 'p')
    vim.fn.mkdir(other, 'p')
    check(vim.uv.fs_symlink(bin, vim.fs.joinpath(venv, 'bin', 'staticfx')), 'symlink into the venv')
    check(vim.uv.fs_symlink(bin, vim.fs.joinpath(other, 'staticfx')), 'symlink into the PATH dir')
    vim.env.PATH = other .. ':' .. (saved_path or '')
    vim.env.VIRTUAL_ENV = venv
    local found, from = staticfx.find_server()
    check(found == vim.fs.joinpath(venv, 'bin', 'staticfx') and from == '$VIRTUAL_ENV', 'venv first: ' .. tostring(found))
    vim.env.VIRTUAL_ENV = vim.fs.joinpath(root, 'no-such-env')
    found, from = staticfx.find_server()
    check(found == vim.fs.joinpath(other, 'staticfx') and from == 'PATH', 'then PATH: ' .. tostring(found))
    vim.env.PATH = vim.fs.joinpath(root, 'empty')
    check(staticfx.find_server() == nil, 'nothing to find')
    notes = {}
    staticfx.setup({})
    check(#notes == 1 and notes[1].level == vim.log.levels.ERROR, 'one error message: ' .. vim.inspect(notes))
    check(notes[1].msg:find('pip install staticfx', 1, true) and notes[1].msg:find('no-such-env', 1, true), notes[1].msg)
    check(staticfx.config.cmd == nil, 'nothing to start')
    vim.env.VIRTUAL_ENV = venv
    staticfx.setup({})
    check(vim.lsp.config.staticfx.cmd[1] == vim.fs.joinpath(venv, 'bin', 'staticfx'), 'setup uses the venv binary')
    vim.env.PATH, vim.env.VIRTUAL_ENV = saved_path, saved_venv
    notes = {}
    vim.fn.delete(root, 'rf')
    log('find_server: $VIRTUAL_ENV, then PATH, else one message')
  end
  require('staticfx').setup({
    cmd = { bin, 'lsp' },
    settings = { exampleInputs = { SimpleNet = { x = { 1, 784 } } }, debounceMs = 0 },
  })
  check(vim.lsp.config.staticfx and vim.lsp.config.staticfx.cmd[1] == bin, 'vim.lsp.config not registered with cmd override')

  -- :checkhealth staticfx finds the server and the registration.
  vim.cmd('checkhealth staticfx')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(report:find('OK server: ' .. bin, 1, true), 'checkhealth: ' .. report)
  check(report:find('OK registered with vim.lsp.config', 1, true), 'checkhealth: ' .. report)
  check(not report:find('ERROR', 1, true), 'checkhealth reports an error: ' .. report)
  vim.cmd('bwipeout')

  -- 2. Open a model file: the server attaches by filetype.
  vim.cmd.edit(fixture)
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == 'python', 'fixture not detected as python')
  check(vim.wait(TIMEOUT, function()
    local c = require('staticfx').client(buf)
    return c ~= nil and c.initialized
  end, 20), 'staticfx did not attach to the Python buffer')
  local client = require('staticfx').client(buf)
  log('attached: ' .. client.name .. ' (' .. table.concat(client.config.cmd, ' ') .. ')')

  -- 3. Diagnostics: the graph break and the analysis limit, with their codes.
  check(vim.wait(TIMEOUT, function()
    return diag(buf, 'FX101') ~= nil and diag(buf, 'FX902') ~= nil
  end, 20), 'expected FX101 and FX902, got ' .. vim.inspect(vim.diagnostic.get(buf)))
  local brk, limit = diag(buf, 'FX101'), diag(buf, 'FX902')
  check(brk.lnum == find_line(buf, 'if h.sum() > 0:'), 'FX101 on the wrong line: ' .. brk.lnum)
  check(brk.severity == vim.diagnostic.severity.WARN, 'FX101 should be a warning')
  check(brk.source == 'staticfx', 'FX101 source')
  local href = vim.tbl_get(brk, 'user_data', 'lsp', 'codeDescription', 'href') or ''
  check(href:match('gb0170%.html$'), 'FX101 lacks the Dynamo page: ' .. vim.inspect(brk.user_data))
  check(limit.lnum == find_line(buf, 'z = not_defined_anywhere(y)'), 'FX902 on the wrong line')
  check(limit.severity == vim.diagnostic.severity.INFO, 'FX902 should be INFO')
  local codes = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(codes, d.code)
  end
  table.sort(codes)
  log('diagnostics: ' .. table.concat(codes, ' '))

  -- With the server attached, :checkhealth shows the Python environment it resolves imports
  -- through (or says why there is none).
  vim.cmd('checkhealth staticfx')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  check(health:find('OK Python %d+%.%d+') or health:find('WARN Python environment: ', 1, true),
    'checkhealth lacks the Python environment: ' .. health)
  check(not health:find('did not answer', 1, true), 'staticfx.environment failed: ' .. health)
  vim.cmd('bwipeout')
  vim.api.nvim_set_current_buf(buf)

  -- 3b. Inlay hints for the visible range, enabled on attach: the shape after each assignment.
  check(vim.lsp.inlay_hint.is_enabled({ bufnr = buf }), 'inlay hints not enabled on attach')
  do
    local fc1 = find_line(buf, 'h = self.fc1(x)')
    local hint
    check(vim.wait(TIMEOUT, function()
      for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
        if h.inlay_hint.position.line == fc1 then
          hint = h.inlay_hint
          return true
        end
      end
    end, 20), 'no inlay hint on `h = self.fc1(x)`: ' .. vim.inspect(vim.lsp.inlay_hint.get({ bufnr = buf })))
    local label = type(hint.label) == 'string' and hint.label or hint.label[1].value
    check(label == '# [1, 128]', 'inlay hint label: ' .. vim.inspect(hint))
    local text = vim.api.nvim_buf_get_lines(buf, fc1, fc1 + 1, false)[1]
    check(hint.position.character == #text, 'inlay hint not at the end of the line: ' .. vim.inspect(hint))
    log(string.format('inlay hints: %d, `%s` on line %d', #vim.lsp.inlay_hint.get({ bufnr = buf }), label, fc1 + 1))
  end

  -- 3c. Code lenses on each forward, refreshed with the diagnostics; their commands work.
  do
    local forward = find_line(buf, 'def forward(self, x):')
    local lenses
    check(vim.wait(TIMEOUT, function()
      lenses = vim.tbl_filter(function(l)
        return l.range.start.line == forward and l.command ~= nil
      end, vim.lsp.codelens.get(buf))
      return #lenses == 2
    end, 20), 'no code lenses on forward: ' .. vim.inspect(vim.lsp.codelens.get(buf)))
    table.sort(lenses, function(a, b) return a.command.title > b.command.title end)
    local reveal, show = lenses[2], lenses[1]
    check(reveal.command.title == '2 graphs · 1 break (FX101)' and reveal.command.command == 'staticfx.revealLocation',
      'break lens: ' .. vim.inspect(reveal))
    check(show.command.title == 'show graph' and show.command.command == 'staticfx.showGraph', 'graph lens: ' .. vim.inspect(show))
    -- The lens of the first break moves the cursor to it.
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    client:exec_cmd(reveal.command, { bufnr = buf })
    check(vim.wait(TIMEOUT, function()
      return vim.api.nvim_win_get_cursor(0)[1] - 1 == brk.lnum
    end, 20), 'the break lens did not move to the break: ' .. vim.inspect(vim.api.nvim_win_get_cursor(0)))
    -- "show graph" produces the DOT of the lens's class.
    local model_win = vim.api.nvim_get_current_win()
    client:exec_cmd(show.command, { bufnr = buf })
    local gwin
    check(vim.wait(TIMEOUT, function()
      for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
        if vim.bo[vim.api.nvim_win_get_buf(w)].filetype == 'dot' then
          gwin = w
          return true
        end
      end
    end, 20), 'the show graph lens opened no dot buffer; notes: ' .. vim.inspect(notes))
    local dot = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(gwin), 0, -1, false), '\n')
    check(dot:match('^digraph "SimpleNet%.forward" {'), 'lens graph is not the digraph: ' .. dot:sub(1, 80))
    vim.api.nvim_win_close(gwin, true)
    vim.api.nvim_set_current_win(model_win)
    vim.api.nvim_set_current_buf(buf)
    log('code lens: ' .. reveal.command.title .. ' | ' .. show.command.title .. ' (revealed the break, showed the DOT)')
  end

  -- 4. The code action for the graph break, applied.
  check(client.server_capabilities.codeActionProvider, 'the server does not advertise codeActionProvider')
  do
    local lsp_diag = vim.tbl_get(brk, 'user_data', 'lsp')
    local resp = client:request_sync('textDocument/codeAction', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      range = lsp_diag.range,
      context = { diagnostics = { lsp_diag }, only = { 'quickfix' } },
    }, TIMEOUT, buf)
    check(resp and not resp.err, 'codeAction failed: ' .. vim.inspect(resp))
    local action = (resp.result or {})[1]
    check(action, 'the server offers no quickfix for FX101 here')
    do
      if not action.edit and not action.command and client.server_capabilities.codeActionProvider.resolveProvider then
        local r = client:request_sync('codeAction/resolve', action, TIMEOUT, buf)
        check(r and r.result, 'codeAction/resolve failed: ' .. vim.inspect(r))
        action = r.result
      end
      local before = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
      if action.edit then
        vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
      end
      if action.command then
        local cmd = type(action.command) == 'table' and action.command or action
        local r = client:request_sync('workspace/executeCommand', { command = cmd.command, arguments = cmd.arguments }, TIMEOUT, buf)
        check(r and not r.err, 'code action command failed: ' .. vim.inspect(r))
      end
      check(vim.wait(TIMEOUT, function()
        return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') ~= before
      end, 20), 'code action "' .. action.title .. '" did not change the buffer')
      check(vim.wait(TIMEOUT, function()
        local d = diag(buf, 'FX101')
        return d == nil or d.lnum ~= brk.lnum
      end, 20), 'FX101 still reported after applying "' .. action.title .. '"')
      log('code action applied: ' .. action.title)
      -- Back to the original text for the graph checks below.
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(before, '\n'))
      check(vim.wait(TIMEOUT, function() return diag(buf, 'FX101') ~= nil end, 20), 'FX101 not back after undoing the action')
    end
  end

  -- 5. :StaticFxGraph with the cursor in SimpleNet: DOT in a split, filetype=dot.
  local line, col = find_line(buf, 'h = F.relu(h)')
  vim.api.nvim_win_set_cursor(0, { line + 1, col })
  local wins_before = #vim.api.nvim_tabpage_list_wins(0)
  vim.cmd('StaticFxGraph')
  local gbuf
  check(vim.wait(TIMEOUT, function()
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local b = vim.api.nvim_win_get_buf(w)
      if vim.bo[b].filetype == 'dot' then
        gbuf = b
        return true
      end
    end
  end, 20), ':StaticFxGraph opened no dot buffer; notes: ' .. vim.inspect(notes))
  check(#vim.api.nvim_tabpage_list_wins(0) == wins_before + 1, 'the graph should open in a split')
  local dot = table.concat(vim.api.nvim_buf_get_lines(gbuf, 0, -1, false), '\n')
  check(dot:match('^digraph "SimpleNet%.forward" {'), 'graph buffer does not hold the digraph: ' .. dot:sub(1, 80))
  check(dot:find('[1, 128]', 1, true), 'DOT lacks the shape from the exampleInputs setting')
  check(dot:find('fx-break', 1, true), 'DOT lacks the graph-break node class')
  check(vim.api.nvim_buf_get_name(gbuf):match('staticfx://graph/SimpleNet%.forward$'), 'graph buffer name')
  log(string.format('StaticFxGraph: %d lines of DOT in a split', vim.api.nvim_buf_line_count(gbuf)))

  -- The Graphviz step of :StaticFxGraph (no viewer is opened headless).
  if vim.fn.executable('dot') == 1 then
    local rendered
    local path = require('staticfx').render(dot, 'svg', function(p) rendered = p end)
    check(path, 'render refused although dot is installed')
    check(vim.wait(TIMEOUT, function() return rendered ~= nil end, 20), 'dot did not render the graph')
    local svg = table.concat(vim.fn.readfile(rendered), '\n')
    check(svg:find('<svg', 1, true) and svg:find('SimpleNet.forward', 1, true), 'rendered file is not the graph SVG')
    log('rendered: ' .. #svg .. ' bytes of SVG')
    os.remove(rendered)
  else
    log('SKIP: Graphviz rendering: `dot` not installed')
  end

  -- A class that is not there: the server's error reaches the user.
  vim.cmd.wincmd('p')
  check(vim.api.nvim_get_current_buf() == buf, 'back in the model buffer')
  notes = {}
  vim.cmd('StaticFxGraph NoSuchNet')
  check(vim.wait(TIMEOUT, function() return #notes > 0 end, 20), 'no message for a missing class')
  check(notes[1].level == vim.log.levels.ERROR and notes[1].msg:find('no traced nn.Module class `NoSuchNet`', 1, true),
    'unexpected message: ' .. vim.inspect(notes))

  -- 6. :StaticFxRun: a floating window with the summary, or with the server's error.
  vim.api.nvim_win_set_cursor(0, { line + 1, col })
  local expected = client:request_sync('workspace/executeCommand', {
    command = 'staticfx.runGraph',
    arguments = { { uri = vim.uri_from_bufnr(buf), position = { line = line, character = col }, inputs = { 'x=1,784' } } },
  }, TIMEOUT, buf)
  check(expected, 'runGraph timed out')
  vim.cmd('StaticFxRun x=1,784')
  local fwin
  check(vim.wait(TIMEOUT, function()
    fwin = float_wins()[1]
    return fwin ~= nil
  end, 20), ':StaticFxRun opened no floating window; notes: ' .. vim.inspect(notes))
  local shown = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(fwin), 0, -1, false)
  -- SimpleNet branches on tensor data, so the executor refuses it: the float shows why.
  check(expected.err and expected.err.message:find('data-dependent', 1, true), 'runGraph should refuse the graph break: ' .. vim.inspect(expected))
  local msg = expected.err.message:gsub('^staticfx%.%w+:%s*', '')
  check(shown[1] == 'StaticFX run failed:' and shown[2] == msg, 'float should show the server error: ' .. vim.inspect(shown))
  log('StaticFxRun: error shown: ' .. shown[2])
  vim.api.nvim_win_close(fwin, true)

  client:stop()
  log('OK')
end

local ok, err = pcall(run)
if not ok then
  fail(tostring(err))
end
vim.cmd('qall!')
