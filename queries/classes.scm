; Class definitions at any depth, with their base-class expressions and their methods.
(class_definition
  name: (identifier) @class.name
  superclasses: (argument_list)? @class.bases
  body: (block) @class.body) @class
