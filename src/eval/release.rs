//! Breaking reference cycles when an interpreter is dropped. Python values form cycles
//! (a module's functions hold the module's globals; a class's MRO starts with the class;
//! closures hold the scope that holds them), and `Rc` never frees a cycle. A batch run
//! (`staticfx check` over thousands of files) leaked every analysed file's values; emptying
//! every mutable container reachable from the loaded modules lets them drop.

use std::collections::HashSet;
use std::rc::{Rc, Weak};

use super::value::{Class, ModuleNs, Object, Scope, Value};

/// What an interpreter created that no module need reach: instances (a module holding a bound
/// method of itself, a config shared by layers that point back at it), classes (each is in
/// its own MRO; one made inside a call outlives the call) and scopes of calls, class bodies
/// and comprehensions (a closure kept in the scope it closes over, as every decorator's
/// wrapper is). Cycles among them outlived the interpreter: each analysis of the language
/// server leaked its models, and their functions the files they were read from. Held weakly,
/// so they free as usual while the interpreter runs.
#[derive(Default)]
pub struct Created {
    objects: Vec<Weak<Object>>,
    classes: Vec<Weak<Class>>,
    scopes: Vec<Weak<Scope>>,
    /// How many handles were left after the last pruning.
    live: usize,
}

impl Created {
    pub fn object(&mut self, o: &Rc<Object>) {
        self.objects.push(Rc::downgrade(o));
        self.prune();
    }

    pub fn class(&mut self, c: &Rc<Class>) {
        self.classes.push(Rc::downgrade(c));
        self.prune();
    }

    pub fn scope(&mut self, s: &Rc<Scope>) {
        self.scopes.push(Rc::downgrade(s));
        self.prune();
    }

    /// Drops the handles of what was freed: a weak handle keeps its allocation, so they must
    /// not pile up (amortised: after the handles doubled).
    fn prune(&mut self) {
        if self.objects.len() + self.classes.len() + self.scopes.len() < (2 * self.live).max(4096) {
            return;
        }
        self.objects.retain(|w| w.strong_count() > 0);
        self.classes.retain(|w| w.strong_count() > 0);
        self.scopes.retain(|w| w.strong_count() > 0);
        self.live = self.objects.len() + self.classes.len() + self.scopes.len();
    }
}

#[derive(Default)]
pub struct Scrubber {
    seen: HashSet<usize>,
    stack: Vec<Value>,
}

impl Scrubber {
    fn first_visit<T: ?Sized>(&mut self, rc: &Rc<T>) -> bool {
        self.seen.insert(Rc::as_ptr(rc) as *const u8 as usize)
    }

    /// Everything `created` holds that is still alive.
    pub fn created(&mut self, created: &Created) {
        for o in created.objects.iter().filter_map(Weak::upgrade) {
            self.stack.push(Value::Object(o));
        }
        for c in created.classes.iter().filter_map(Weak::upgrade) {
            self.stack.push(Value::Class(c));
        }
        for s in created.scopes.iter().filter_map(Weak::upgrade) {
            self.scope(&s);
        }
    }

    pub fn module(&mut self, ns: &Rc<ModuleNs>) {
        if !self.first_visit(ns) {
            return;
        }
        let vars = std::mem::take(&mut *ns.vars.borrow_mut());
        self.stack.extend(vars.into_values());
    }

    fn scope(&mut self, s: &Rc<Scope>) {
        if !self.first_visit(s) {
            return;
        }
        let vars = std::mem::take(&mut *s.vars.borrow_mut());
        self.stack.extend(vars.into_values());
        if let Some(p) = &s.parent {
            self.scope(p);
        }
    }

    pub fn drain(&mut self) {
        while let Some(v) = self.stack.pop() {
            match v {
                Value::Tuple(t) => {
                    if self.first_visit(&t) {
                        self.stack.extend(t.iter().cloned());
                    }
                }
                Value::List(l) => {
                    if self.first_visit(&l) {
                        let items = std::mem::take(&mut *l.borrow_mut());
                        self.stack.extend(items);
                    }
                }
                Value::Dict(d) => {
                    if self.first_visit(&d) {
                        let items = std::mem::take(&mut *d.borrow_mut());
                        for (k, v) in items {
                            self.stack.push(k);
                            self.stack.push(v);
                        }
                    }
                }
                Value::Slice(s) => self.stack.extend(s.iter().cloned()),
                Value::BoundMethod(r, f) => {
                    self.stack.push((*r).clone());
                    self.stack.push(Value::Function(f));
                }
                Value::Function(f) => {
                    if !self.first_visit(&f) {
                        continue;
                    }
                    if let Some(c) = &f.closure {
                        self.scope(c);
                    }
                    for p in f.params.iter() {
                        if let Some(d) = &p.default {
                            self.stack.push(d.clone());
                        }
                    }
                    let g = f.globals.clone();
                    self.module(&g);
                }
                Value::Class(c) => {
                    if self.first_visit(&c) {
                        let ns = std::mem::take(&mut *c.ns.borrow_mut());
                        self.stack.extend(ns.into_values());
                        let mro = std::mem::take(&mut *c.mro.borrow_mut());
                        self.stack.extend(mro);
                        self.stack.extend(c.bases.iter().cloned());
                    }
                }
                Value::Object(o) => {
                    if self.first_visit(&o) {
                        let attrs = std::mem::take(&mut *o.attrs.borrow_mut());
                        self.stack.extend(attrs.into_values());
                        self.stack.push(o.class.clone());
                    }
                }
                Value::Module(m) => self.module(&m),
                Value::InstanceDict(o, _) => self.stack.push(Value::Object(o)),
                Value::ModuleGlobals(m) => self.module(&m),
                Value::Method(r, _) => self.stack.push((*r).clone()),
                Value::Super(r, c) => {
                    self.stack.push((*r).clone());
                    self.stack.push(Value::Class(c));
                }
                Value::Partial(p) => {
                    if self.first_visit(&p) {
                        self.stack.push(p.func.clone());
                        self.stack.extend(p.args.iter().cloned());
                        self.stack.extend(p.kwargs.iter().map(|(_, v)| v.clone()));
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use crate::eval::Interp;
    use crate::semantic::Project;

    /// Every class is in a cycle with itself (its MRO starts with it); one made inside a call
    /// (a decorator's, a factory's) outlives the call's scope, and with it the functions of its
    /// body, each holding its file. Leaked, they held library files' syntax trees after the
    /// language server dropped the library that loaded them.
    #[test]
    fn dropping_the_interpreter_frees_classes_made_inside_calls() {
        let text = "def factory(base):\n    class Made(base):\n        def method(self):\n            return [i for i in range(2)]\n    return Made().method()\n\nresult = factory(object)\n\nclass Outer:\n    class Inner:\n        def f(self):\n            return 1\n";
        let mut project = Project::new("/virtual");
        project.add_overlay("/virtual/classes.py", Arc::from(text), None);
        let id = project.load_path(Path::new("/virtual/classes.py")).unwrap();
        let project = Arc::new(project);
        let file = project.file(id);
        let mut interp = Interp::new(project.clone());
        let ns = interp.load_module(id).unwrap();
        assert!(ns.vars.borrow().contains_key("result"));
        drop(ns);
        assert!(
            Arc::strong_count(&file) > 2,
            "the interpreter's values hold the file"
        );
        drop(interp);
        // The project's slot and this handle.
        assert_eq!(Arc::strong_count(&file), 2);
    }
}
