; Every import form; the semantic model resolves relative levels and aliases.
(import_statement) @import
(import_from_statement) @import.from
(future_import_statement) @import.future
