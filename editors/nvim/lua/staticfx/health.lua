-- :checkhealth staticfx
local M = {}

function M.check()
  local h = vim.health
  h.start('staticfx')
  if vim.fn.has('nvim-0.11') == 1 then
    h.ok('Neovim ' .. tostring(vim.version()))
  else
    h.error('Neovim 0.11+ required (vim.lsp.config), found ' .. tostring(vim.version()))
  end
  local staticfx = require('staticfx')
  local cfg = staticfx.config
  local exe = cfg.cmd and cfg.cmd[1]
  if not exe then
    h.error(staticfx.not_found_message(), { 'pip install staticfx', 'or setup{ cmd = { "/path/to/staticfx", "lsp" } }' })
  elseif vim.fn.executable(exe) == 1 then
    local out = vim.system({ exe, '--version' }, { text = true }):wait()
    h.ok(string.format('server: %s (%s)', vim.fn.exepath(exe), vim.trim(out.stdout or '')))
  else
    h.error('server `' .. exe .. '` not found', { 'pip install staticfx', 'or cargo install --path . in the staticfx repository', 'or setup{ cmd = { "/path/to/staticfx", "lsp" } }' })
  end
  if vim.lsp.config.staticfx then
    h.ok('registered with vim.lsp.config; enabled: ' .. tostring(vim.lsp.is_enabled and vim.lsp.is_enabled('staticfx')))
  else
    h.warn('not registered: call require("staticfx").setup{}')
  end
  M.check_python(h, cfg)
  if not cfg.render then
    h.info(':StaticFxGraph shows DOT only (render = false)')
  elseif vim.fn.executable('dot') == 1 then
    h.ok(':StaticFxGraph renders ' .. cfg.render .. ' with Graphviz')
  else
    h.warn('Graphviz `dot` not found: :StaticFxGraph shows the DOT only', { 'apt-get install graphviz' })
  end
end

--- The Python environment the server resolves imports through, as it reports it
--- (`staticfx.environment`), or the configured setting when no server is attached.
function M.check_python(h, cfg)
  local setting = (cfg.settings and cfg.settings.python) or cfg.python
  local clients = vim.lsp.get_clients({ name = 'staticfx' })
  local client = clients[1]
  if not client then
    h.info('Python environment: ' .. (setting and ('setting `' .. setting .. '`') or 'discovered')
      .. ' (open a Python file to see what the server found)')
    return
  end
  local bufnr = client.attached_buffers and next(client.attached_buffers) or nil
  local args = bufnr and { { uri = vim.uri_from_bufnr(bufnr) } } or {}
  local res = client:request_sync('workspace/executeCommand',
    { command = 'staticfx.environment', arguments = args }, 10000, bufnr)
  local env = res and res.result
  if not env then
    h.warn('Python environment: the server did not answer staticfx.environment'
      .. ((res and res.err) and (': ' .. vim.inspect(res.err)) or ''))
  elseif env.error then
    h.warn('Python environment: ' .. env.error, {
      'set `python` in require("staticfx").setup{} or [tool.staticfx] python in pyproject.toml',
      'or activate a venv before starting Neovim',
    })
  else
    h.ok(string.format('Python %s at %s (found by %s)', env.version, env.interpreter, env.origin))
    for _, p in ipairs(env.libraryPaths or {}) do
      h.info('library path: ' .. p)
    end
    for _, e in ipairs(env.editable or {}) do
      h.info('editable install: ' .. e.module .. ' -> ' .. e.path)
    end
  end
end

return M
