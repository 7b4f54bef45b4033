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
  if not cfg.render then
    h.info(':StaticFxGraph shows DOT only (render = false)')
  elseif vim.fn.executable('dot') == 1 then
    h.ok(':StaticFxGraph renders ' .. cfg.render .. ' with Graphviz')
  else
    h.warn('Graphviz `dot` not found: :StaticFxGraph shows the DOT only', { 'apt-get install graphviz' })
  end
end

return M
