-- Renders Neovim's view of a real model file to HTML (:TOhtml keeps highlights, diagnostic
-- virtual text, inlay hints and code lenses): the forward holding the file's first graph break
-- (an FX1xx diagnostic), from its code lens to a few lines past the break, its docstring folded
-- so that the lens, the shapes and the break fit one picture.
-- Env: STATICFX_BIN, STATICFX_PLUGIN, FILE, ROOT (the workspace: the folder holding the
-- package), OUT.
vim.opt.rtp:prepend(assert(os.getenv('STATICFX_PLUGIN')))
vim.cmd('filetype plugin on | syntax on')
vim.cmd.runtime('plugin/staticfx.lua')
vim.o.termguicolors = true
vim.o.background = 'dark'
vim.o.number = true
vim.o.foldmethod = 'manual'
vim.diagnostic.config({
  virtual_text = { prefix = '●', format = function(d) return d.code .. ': ' .. d.message end },
  underline = true,
})
require('staticfx').setup({ cmd = { assert(os.getenv('STATICFX_BIN')), 'lsp' } })
-- The package's folder is the workspace, as when a user opens the library's checkout.
vim.lsp.config('staticfx', { root_dir = assert(os.getenv('ROOT')) })
vim.cmd.edit(assert(os.getenv('FILE')))
local buf = vim.api.nvim_get_current_buf()

local function first_break()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if type(d.code) == 'string' and d.code:match('^FX1') then
      return d
    end
  end
end
assert(vim.wait(300000, function() return first_break() ~= nil end, 50), 'no FX1xx diagnostic')
local brk = first_break()
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
-- The forward holding the break (0-based line of its `def`).
local def
for l = brk.lnum, 0, -1 do
  if lines[l + 1]:match('^%s+def forward%(') then
    def = l
    break
  end
end
assert(def, 'the break is in no forward')

-- The lens of that forward (on its first decorator, if any) and hints in its body, from the
-- same version as the diagnostics.
local function lens_line()
  local top
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    local line = l.range.start.line
    if line <= def and line >= def - 5 and (not top or line < top) then
      top = line
    end
  end
  return top
end
local function ready()
  local hints = vim.lsp.inlay_hint.get({
    bufnr = buf,
    range = { start = { line = def, character = 0 }, ['end'] = { line = brk.lnum, character = 0 } },
  })
  return lens_line() ~= nil and #hints > 0
end
-- The window shows the forward: hints are asked for as it is drawn.
vim.api.nvim_win_set_cursor(0, { def + 1, 0 })
vim.cmd('normal! zt')
assert(vim.wait(60000, function()
  vim.cmd('redraw!')
  vim.lsp.codelens.refresh({ bufnr = buf })
  return ready()
end, 200), 'no code lens or inlay hints on the forward: ' .. #vim.lsp.codelens.get(buf) .. ' lenses, '
  .. #vim.lsp.inlay_hint.get({ bufnr = buf }) .. ' hints')

-- Fold the docstring of the forward.
local doc_from, doc_to
for l = def + 1, brk.lnum do
  local text = lines[l + 1]
  if not doc_from and text:match('^%s*r?"""') then
    doc_from = l
    if select(2, text:gsub('"""', '')) >= 2 then
      doc_to = l
      break
    end
  elseif doc_from and text:match('"""') then
    doc_to = l
    break
  end
end
if doc_from and doc_to and doc_to > doc_from then
  vim.cmd(string.format('%d,%dfold', doc_from + 1, doc_to + 1))
end
-- Neovim draws inlay hints as ephemeral extmarks while it redraws, which :TOhtml does not
-- see: the same hints, as the client holds them, become lasting extmarks for the picture.
local ns = vim.api.nvim_create_namespace('staticfx_screenshot_hints')
for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
  local hint = h.inlay_hint
  local label = type(hint.label) == 'string' and hint.label
    or table.concat(vim.tbl_map(function(p) return p.value end, hint.label))
  local line = hint.position.line
  local col = vim.str_byteindex(lines[line + 1], 'utf-16', hint.position.character, false)
  vim.api.nvim_buf_set_extmark(buf, ns, line, col, {
    virt_text = { { (hint.paddingLeft and ' ' or '') .. label, 'LspInlayHint' } },
    virt_text_pos = 'inline',
  })
end
vim.lsp.inlay_hint.enable(false, { bufnr = buf })
local last = math.min(#lines, brk.lnum + 8)
vim.cmd(string.format('%d,%dTOhtml %s', lens_line(), last, vim.fn.fnameescape(assert(os.getenv('OUT')))))
vim.cmd('qall!')
