-- StaticFX for Neovim 0.11+: registers `staticfx lsp` for Python buffers and adds
-- :StaticFxGraph (the traced FX graph as DOT, optionally rendered by Graphviz) and
-- :StaticFxRun (run the graph on sample inputs, summary in a floating window). On attach it
-- enables the server's inlay hints (the shape of each assignment in forward) and code lenses
-- (graphs, nodes and breaks above each forward), refreshed with the diagnostics; the lenses'
-- commands are handled here (vim.lsp.commands).
local M = {}

local defaults = {
  -- The server command, e.g. { '/path/to/staticfx', 'lsp' }. nil: the staticfx of the activated
  -- Python environment ($VIRTUAL_ENV, where `pip install staticfx` puts it), then the one on
  -- PATH (see M.find_server).
  cmd = nil,
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' },
  -- Sent as initializationOptions and answered to workspace/configuration (section `staticfx`),
  -- e.g. { exampleInputs = { SimpleNet = { x = { 1, 784 } } }, python = '.venv' }.
  settings = {},
  -- The interpreter or venv imports outside the workspace resolve through (timm,
  -- transformers, ...); nil discovers it ($VIRTUAL_ENV, .venv/venv, python3 on PATH).
  -- Shorthand for settings.python.
  python = nil,
  -- :StaticFxGraph also renders the DOT with Graphviz (when `dot` is installed) and opens the
  -- image with the system viewer: 'svg', 'png', or false to only show the DOT.
  render = 'svg',
  -- Called with the image path instead of vim.ui.open.
  open = nil,
  -- Show the server's inlay hints (`# [1, 128]` after each assignment in forward) on attach.
  -- The server's own setting is settings.inlayHints.shapes.
  inlay_hints = true,
  -- Show and refresh the code lenses above each forward (run one with vim.lsp.codelens.run()).
  codelens = true,
}

M.config = vim.deepcopy(defaults)

local NAME = 'staticfx'

local function notify(msg, level)
  vim.notify('staticfx: ' .. msg, level or vim.log.levels.INFO)
end

--- The staticfx binary to run and where it was found: `$VIRTUAL_ENV/bin/staticfx` (Scripts\ on
--- Windows) of the activated environment, then the `staticfx` on PATH. nil when neither exists.
function M.find_server()
  local venv = vim.env.VIRTUAL_ENV
  if venv and venv ~= '' then
    for _, rel in ipairs({ 'bin/staticfx', 'Scripts/staticfx.exe' }) do
      local candidate = vim.fs.joinpath(venv, rel)
      if vim.fn.executable(candidate) == 1 then
        return candidate, '$VIRTUAL_ENV'
      end
    end
  end
  local on_path = vim.fn.exepath('staticfx')
  if on_path ~= '' then
    return on_path, 'PATH'
  end
  return nil
end

--- The message when no binary is found.
function M.not_found_message()
  local venv = vim.env.VIRTUAL_ENV
  local where = (venv and venv ~= '') and ('$VIRTUAL_ENV (' .. venv .. ') or PATH') or 'PATH (no $VIRTUAL_ENV is active)'
  return 'no staticfx binary found in ' .. where
    .. '. Install it with `pip install staticfx` in that environment (or `cargo install --path .` from a checkout), '
    .. 'or pass setup{ cmd = { "/path/to/staticfx", "lsp" } }'
end

--- Registers and enables the language server. Safe to call again with new options.
function M.setup(opts)
  if vim.fn.has('nvim-0.11') ~= 1 then
    notify('needs Neovim 0.11 or newer (vim.lsp.config)', vim.log.levels.ERROR)
    return
  end
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if type(M.config.cmd) == 'string' then
    M.config.cmd = { M.config.cmd, 'lsp' }
  end
  if M.config.cmd == nil then
    local found = M.find_server()
    if not found then
      notify(M.not_found_message(), vim.log.levels.ERROR)
      return
    end
    M.config.cmd = { found, 'lsp' }
  end
  local settings = vim.deepcopy(M.config.settings or {})
  if M.config.python then
    settings.python = M.config.python
  end
  vim.lsp.config(NAME, {
    cmd = M.config.cmd,
    filetypes = M.config.filetypes,
    root_markers = M.config.root_markers,
    init_options = settings,
    settings = { staticfx = settings },
  })
  vim.lsp.enable(NAME)
  M.register_commands()
  local group = vim.api.nvim_create_augroup('staticfx', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == NAME then
        M.on_attach(client, args.buf)
      end
    end,
  })
  -- The lenses follow the diagnostics: both come from the analysis of the same version.
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function(args)
      if M.config.codelens and vim.api.nvim_buf_is_valid(args.buf) and M.client(args.buf) then
        vim.lsp.codelens.refresh({ bufnr = args.buf })
      end
    end,
  })
end

--- Enables inlay hints and code lenses for `bufnr` when the server offers them.
function M.on_attach(client, bufnr)
  if M.config.inlay_hints and client:supports_method('textDocument/inlayHint') then
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end
  if M.config.codelens and client:supports_method('textDocument/codeLens') then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
  end
end

--- The commands of the server's code lenses, run by vim.lsp.codelens.run(): the graph and the
--- run of the lens's class (`{uri, class}`), and moving to a place (`{uri, range}`, the first
--- break).
function M.register_commands()
  local function arg_of(command)
    return (command.arguments or {})[1] or {}
  end
  local function buf_of(arg, ctx)
    return arg.uri and vim.uri_to_bufnr(arg.uri) or ctx.bufnr
  end
  vim.lsp.commands['staticfx.showGraph'] = function(command, ctx)
    local arg = arg_of(command)
    M.graph(arg.class, buf_of(arg, ctx))
  end
  vim.lsp.commands['staticfx.runGraph'] = function(command, ctx)
    local arg = arg_of(command)
    M.run(arg.inputs, buf_of(arg, ctx), arg.class)
  end
  vim.lsp.commands['staticfx.revealLocation'] = function(command, ctx)
    local arg = arg_of(command)
    if not (arg.uri and arg.range) then
      return notify('revealLocation needs {uri, range}', vim.log.levels.ERROR)
    end
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    vim.lsp.util.show_document({ uri = arg.uri, range = arg.range }, client and client.offset_encoding or 'utf-16', { focus = true })
  end
end

--- The staticfx client attached to `bufnr` (default: current buffer), or nil and a message.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local c = vim.lsp.get_clients({ bufnr = bufnr, name = NAME })[1]
  if not c then
    return nil, 'no staticfx language server attached to this buffer (is it a Python file? run :checkhealth vim.lsp)'
  end
  return c
end

--- Arguments for staticfx.showGraph / staticfx.runGraph: {uri, class} when a class name is
--- given, else {uri, position} of the cursor.
function M.command_args(client, bufnr, class)
  local args = { uri = vim.uri_from_bufnr(bufnr) }
  if class and class ~= '' then
    args.class = class
  else
    args.position = vim.lsp.util.make_position_params(0, client.offset_encoding).position
  end
  return args
end

local function err_text(err)
  local msg = type(err) == 'table' and err.message or tostring(err)
  return (msg:gsub('^staticfx%.%w+:%s*', ''))
end

local function execute(client, bufnr, command, args, on_result)
  client:request('workspace/executeCommand', { command = command, arguments = { args } }, function(err, result)
    on_result(err and err_text(err) or nil, result)
  end, bufnr)
end

local function graph_buffer(name, dot)
  local bufname = 'staticfx://graph/' .. name
  local buf = vim.fn.bufnr(bufname)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, bufname)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(dot, '\n', { trimempty = true }))
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'dot'
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('vsplit')
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  return buf
end

--- Renders DOT with Graphviz to a temporary SVG/PNG and opens it. Returns the path or nil, why.
function M.render(dot, format, on_done)
  format = format or M.config.render
  if not format then
    return nil, 'rendering disabled'
  end
  if vim.fn.executable('dot') ~= 1 then
    return nil, 'Graphviz `dot` not installed'
  end
  local path = vim.fn.tempname() .. '.' .. format
  vim.system({ 'dot', '-T' .. format, '-o', path }, { stdin = dot }, vim.schedule_wrap(function(out)
    if out.code ~= 0 then
      notify('dot failed: ' .. (out.stderr or ''), vim.log.levels.ERROR)
      return
    end
    if on_done then
      on_done(path)
    elseif M.config.open then
      M.config.open(path)
    else
      local _, open_err = vim.ui.open(path)
      if open_err then
        notify('rendered ' .. path .. ' (' .. open_err .. ')', vim.log.levels.WARN)
      end
    end
  end))
  return path
end

local function headless()
  return #vim.api.nvim_list_uis() == 0
end

--- :StaticFxGraph [Class]: the FX graph of the class under the cursor (or the named class) of
--- `bufnr` (default: the current buffer).
function M.graph(class, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client, why = M.client(bufnr)
  if not client then
    return notify(why, vim.log.levels.ERROR)
  end
  execute(client, bufnr, 'staticfx.showGraph', M.command_args(client, bufnr, class), function(err, result)
    if err then
      return notify('Show graph: ' .. err, vim.log.levels.ERROR)
    end
    if type(result) ~= 'table' or type(result.dot) ~= 'string' then
      return notify('Show graph: the server returned no DOT', vim.log.levels.ERROR)
    end
    graph_buffer(result.name or 'graph', result.dot)
    -- No viewer to open without a UI (headless tests, scripts).
    if M.config.render and not headless() then
      M.render(result.dot)
    end
  end)
end

--- The lines shown for a runGraph answer.
function M.run_lines(err, result)
  if err then
    return { 'StaticFX run failed:', err }, true
  end
  if type(result) ~= 'table' or type(result.summary) ~= 'string' then
    return { 'StaticFX run failed:', 'the server returned no summary' }, true
  end
  local lines = vim.split(result.summary, '\n', { trimempty = true })
  if type(result.outputs) == 'table' and #result.outputs > 0 then
    table.insert(lines, '')
    table.insert(lines, 'Outputs:')
    for i, o in ipairs(result.outputs) do
      table.insert(lines, string.format('  [%d] %s', i - 1, type(o) == 'string' and o or vim.json.encode(o)))
    end
  end
  return lines, false
end

local function float(lines, is_error)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width, math.max(20, vim.o.columns - 4))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    row = math.max(0, math.floor((vim.o.lines - #lines) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = math.min(#lines, math.max(1, vim.o.lines - 4)),
    style = 'minimal',
    border = 'rounded',
    title = ' StaticFX run ',
  })
  if is_error then
    vim.wo[win].winhighlight = 'Normal:ErrorMsg,FloatBorder:ErrorMsg'
  end
  for _, key in ipairs({ 'q', '<Esc>' }) do
    vim.keymap.set('n', key, '<cmd>close<cr>', { buffer = buf, nowait = true })
  end
  return win, buf
end

--- :StaticFxRun [NAME=SHAPE[:DTYPE] ...]: runs the graph of the class under the cursor (or the
--- named class) of `bufnr` (default: the current buffer).
function M.run(inputs, bufnr, class)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client, why = M.client(bufnr)
  if not client then
    return notify(why, vim.log.levels.ERROR)
  end
  local args = M.command_args(client, bufnr, class)
  if inputs and #inputs > 0 then
    args.inputs = inputs
  end
  execute(client, bufnr, 'staticfx.runGraph', args, function(err, result)
    float(M.run_lines(err, result))
  end)
end

return M
