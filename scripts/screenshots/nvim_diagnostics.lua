-- Renders Neovim's view of examples/simple_net.py with staticfx diagnostics to HTML (:TOhtml
-- keeps highlights and diagnostic virtual text). Env: STATICFX_BIN, STATICFX_PLUGIN, FIXTURE, OUT.
vim.opt.rtp:prepend(assert(os.getenv('STATICFX_PLUGIN')))
vim.cmd('filetype plugin on | syntax on')
vim.cmd.runtime('plugin/staticfx.lua')
vim.o.termguicolors = true
vim.o.background = 'dark'
vim.diagnostic.config({
  virtual_text = { prefix = '●', format = function(d) return d.code .. ': ' .. d.message end },
  underline = true,
})
require('staticfx').setup({
  cmd = { assert(os.getenv('STATICFX_BIN')), 'lsp' },
  settings = { exampleInputs = { SimpleNet = { x = { 1, 784 } } } },
})
vim.cmd.edit(assert(os.getenv('FIXTURE')))
local buf = vim.api.nvim_get_current_buf()
assert(vim.wait(30000, function() return #vim.diagnostic.get(buf) >= 2 end, 20), 'no diagnostics')
vim.cmd('TOhtml ' .. vim.fn.fnameescape(assert(os.getenv('OUT'))))
vim.cmd('qall!')
