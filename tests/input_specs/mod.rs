//! Forward inputs as the torch-generated expectation files write them:
//! `{"x": {"shape": [1, 3, 224, 224], "dtype": "float32"}}`.

use serde_json::Value;
use staticfx::analysis::InputSpec;
use staticfx::shapes::DType;

pub fn inputs_of(v: &Value) -> Vec<InputSpec> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(name, spec)| {
            InputSpec::tensor(
                name.clone(),
                spec["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_i64().unwrap())
                    .collect(),
                DType::parse(spec["dtype"].as_str().unwrap()).unwrap(),
            )
        })
        .collect()
}
