//! Prints a task's clients as JSON, each its standardised training and
//! validation features and labels, for `scripts/svm_fixtures.py` (the
//! scikit-learn reference of the SVM objectives):
//! `cargo run -p fedhe-tasks --example svm_clients -- pima-svm > clients.json`.
use fedhe_tasks::Problem;
use fedhe_tasks::{spec, FederatedSvm};

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "pima-svm".into());
    let f = FederatedSvm::build(spec(&name).expect("known task")).expect("builds");
    let rows = |m: &ndarray::Array2<f64>| -> Vec<Vec<f64>> {
        m.rows().into_iter().map(|r| r.to_vec()).collect()
    };
    let clients: Vec<serde_json::Value> = (0..f.clients())
        .map(|i| {
            let c = f.client(i);
            serde_json::json!({
                "train_x": rows(c.train_features()),
                "train_y": c.train_labels().to_vec(),
                "validation_x": rows(c.validation_features()),
                "validation_y": c.validation_labels().to_vec(),
            })
        })
        .collect();
    println!(
        "{}",
        serde_json::json!({ "task": name, "clients": clients })
    );
}
