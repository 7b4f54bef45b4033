-- User commands only; the server is registered by require('staticfx').setup{}.
if vim.g.loaded_staticfx then
  return
end
vim.g.loaded_staticfx = true

vim.api.nvim_create_user_command('StaticFxGraph', function(o)
  require('staticfx').graph(o.args)
end, { nargs = '?', desc = 'StaticFX: show the FX graph of the class under the cursor (or the named class)' })

vim.api.nvim_create_user_command('StaticFxRun', function(o)
  require('staticfx').run(o.fargs)
end, { nargs = '*', desc = 'StaticFX: run the graph on sample inputs (NAME=SHAPE[:DTYPE] ...)' })
