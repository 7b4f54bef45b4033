//! The optimized-graph cache: one JSON file per (sources, entry, inputs, catalogue, pipeline)
//! combination, named by the SHA-256 of all of them.
//!
//! File names are hex digests only, so nothing from source text or user input ever reaches
//! a path. Writes go to a temporary file in the same directory and are renamed into place,
//! so a reader sees either the old entry or the whole new one. An entry that does not parse,
//! belongs to another key or version, or fails graph validation is treated as absent and
//! overwritten by the next store.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{validate, PassRecord, PIPELINE_VERSION};
use crate::graph::{Arg, Graph, Node, NodeId, Op, Origin, RegionTag};
use crate::shapes::Meta;

/// Everything an optimized graph depends on.
pub struct KeyParts<'a> {
    /// (path, text) of every source file the analysis read.
    pub files: Vec<(String, &'a str)>,
    pub entry: Option<&'a str>,
    /// The traced forward (`ResNet.forward`): per-class mode caches each class separately.
    pub graph: &'a str,
    /// `x=1x3x224x224:float32`, in the order given.
    pub inputs: Vec<String>,
    pub inference: bool,
    pub disabled: Vec<String>,
}

pub fn key(parts: &KeyParts) -> String {
    let mut h = Sha256::new();
    // Length-prefixed fields: no two different inputs concatenate to the same bytes.
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(b"staticfx-graph-cache");
    field(&PIPELINE_VERSION.to_le_bytes());
    field(&crate::catalog::Catalog::fingerprint().to_le_bytes());
    let mut files = parts.files.clone();
    files.sort();
    field(&(files.len() as u64).to_le_bytes());
    for (p, t) in &files {
        field(p.as_bytes());
        field(t.as_bytes());
    }
    field(parts.entry.unwrap_or("\u{0}per-class").as_bytes());
    field(parts.graph.as_bytes());
    field(&(parts.inputs.len() as u64).to_le_bytes());
    for i in &parts.inputs {
        field(i.as_bytes());
    }
    field(&[parts.inference as u8]);
    let mut disabled = parts.disabled.clone();
    disabled.sort();
    disabled.dedup();
    for d in &disabled {
        field(d.as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `Arg` with node references as positions in the serialised node list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
enum CArg {
    Node(usize),
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Tuple(Vec<CArg>),
    List(Vec<CArg>),
    Slice(Box<[CArg; 3]>),
    Ellipsis,
    Dtype(String),
    Device(String),
    Repr(String),
}

impl CArg {
    fn from(a: &Arg, pos: &HashMap<NodeId, usize>) -> CArg {
        match a {
            Arg::Node(n) => CArg::Node(pos[n]),
            Arg::None => CArg::None,
            Arg::Bool(b) => CArg::Bool(*b),
            Arg::Int(i) => CArg::Int(*i),
            Arg::Float(f) => CArg::Float(*f),
            Arg::Str(s) => CArg::Str(s.clone()),
            Arg::Tuple(v) => CArg::Tuple(v.iter().map(|x| CArg::from(x, pos)).collect()),
            Arg::List(v) => CArg::List(v.iter().map(|x| CArg::from(x, pos)).collect()),
            Arg::Slice(s) => CArg::Slice(Box::new([
                CArg::from(&s[0], pos),
                CArg::from(&s[1], pos),
                CArg::from(&s[2], pos),
            ])),
            Arg::Ellipsis => CArg::Ellipsis,
            Arg::Dtype(d) => CArg::Dtype(d.clone()),
            Arg::Device(d) => CArg::Device(d.clone()),
            Arg::Repr(r) => CArg::Repr(r.clone()),
        }
    }

    fn to(&self, ids: &[NodeId]) -> Option<Arg> {
        Some(match self {
            CArg::Node(i) => Arg::Node(*ids.get(*i)?),
            CArg::None => Arg::None,
            CArg::Bool(b) => Arg::Bool(*b),
            CArg::Int(i) => Arg::Int(*i),
            CArg::Float(f) => Arg::Float(*f),
            CArg::Str(s) => Arg::Str(s.clone()),
            CArg::Tuple(v) => Arg::Tuple(v.iter().map(|x| x.to(ids)).collect::<Option<_>>()?),
            CArg::List(v) => Arg::List(v.iter().map(|x| x.to(ids)).collect::<Option<_>>()?),
            CArg::Slice(s) => Arg::Slice(Box::new([s[0].to(ids)?, s[1].to(ids)?, s[2].to(ids)?])),
            CArg::Ellipsis => Arg::Ellipsis,
            CArg::Dtype(d) => Arg::Dtype(d.clone()),
            CArg::Device(d) => Arg::Device(d.clone()),
            CArg::Repr(r) => Arg::Repr(r.clone()),
        })
    }
}

#[derive(Serialize, Deserialize, Clone, Debug)]
struct CNode {
    name: String,
    op: Op,
    target: String,
    args: Vec<CArg>,
    kwargs: Vec<(String, CArg)>,
    origin: Option<Origin>,
    meta: Meta,
    region: Option<RegionTag>,
    module_class: Option<String>,
    fused_from: Vec<Origin>,
    mutates_input: bool,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    version: u32,
    key: String,
    nodes: Vec<CNode>,
    passes: Vec<PassRecord>,
}

pub struct GraphCache {
    dir: PathBuf,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl GraphCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        GraphCache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        // Keys come from `key()`; refuse anything else rather than trust it near a path.
        (key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| self.dir.join(format!("{key}.json")))
    }

    /// The cached graph and pass log, or None when absent, unreadable or not trustworthy.
    pub fn load(&self, key: &str) -> Option<(Graph, Vec<PassRecord>)> {
        let text = std::fs::read_to_string(self.path(key)?).ok()?;
        decode(key, &text)
    }
}

/// A cache file's text → the graph and pass log it holds, or None unless it is a valid graph
/// stored under `key` by this pipeline version. Never trusts the file: every reference and
/// the graph's invariants are checked (the fuzz target `cache_load` feeds it arbitrary bytes).
pub fn decode(key: &str, text: &str) -> Option<(Graph, Vec<PassRecord>)> {
    let entry: Entry = serde_json::from_str(text).ok()?;
    if entry.version != PIPELINE_VERSION || entry.key != key {
        return None;
    }
    let mut g = Graph::new();
    let mut ids: Vec<NodeId> = Vec::with_capacity(entry.nodes.len());
    for n in entry.nodes {
        let args = n
            .args
            .iter()
            .map(|a| a.to(&ids))
            .collect::<Option<Vec<_>>>()?;
        let kwargs = n
            .kwargs
            .iter()
            .map(|(k, a)| a.to(&ids).map(|a| (k.clone(), a)))
            .collect::<Option<Vec<_>>>()?;
        let node = Node {
            name: n.name.clone(),
            op: n.op,
            target: n.target,
            args,
            kwargs,
            origin: n.origin,
            meta: n.meta,
            region: n.region,
            module_class: n.module_class,
            fused_from: n.fused_from,
            mutates_input: n.mutates_input,
            // Findings come from the traced graph, never from a cached optimized one.
            shape_error: None,
        };
        let id = g.push_node(node);
        if g.node(id).name != n.name {
            return None;
        }
        ids.push(id);
    }
    validate(&g).ok()?;
    Some((g, entry.passes))
}

impl GraphCache {
    pub fn store(&self, key: &str, g: &Graph, passes: &[PassRecord]) -> std::io::Result<()> {
        let Some(path) = self.path(key) else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "cache keys are hex digests",
            ));
        };
        let pos: HashMap<NodeId, usize> =
            g.order.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let nodes = g
            .nodes()
            .map(|(_, n)| CNode {
                name: n.name.clone(),
                op: n.op,
                target: n.target.clone(),
                args: n.args.iter().map(|a| CArg::from(a, &pos)).collect(),
                kwargs: n
                    .kwargs
                    .iter()
                    .map(|(k, a)| (k.clone(), CArg::from(a, &pos)))
                    .collect(),
                origin: n.origin.clone(),
                meta: n.meta.clone(),
                region: n.region,
                module_class: n.module_class.clone(),
                fused_from: n.fused_from.clone(),
                mutates_input: n.mutates_input,
            })
            .collect();
        let entry = Entry {
            version: PIPELINE_VERSION,
            key: key.to_string(),
            nodes,
            passes: passes.to_vec(),
        };
        let text = serde_json::to_string(&entry).map_err(std::io::Error::other)?;
        std::fs::create_dir_all(&self.dir)?;
        let tmp = self.dir.join(format!(
            "{key}.tmp{}-{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}
