//! Prints each client's validation error over a grid of (C, γ).
use fedhe_tasks::Problem;
use fedhe_tasks::{spec, FederatedSvm};
fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "pima-svm".into());
    let f = FederatedSvm::build(spec(&name).expect("known task")).expect("builds");
    for client in 0..f.clients() {
        println!(
            "client {client}: train {} validation {}",
            f.client(client).train_rows(),
            f.client(client).validation_rows()
        );
        for u0 in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let row: Vec<String> = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
                .iter()
                .map(|&u1| {
                    format!(
                        "{:.3}",
                        f.validation_error(client, &[u0, u1]).expect("evaluates")
                    )
                })
                .collect();
            println!("  u_C {u0:.2}: {}", row.join(" "));
        }
    }
}
