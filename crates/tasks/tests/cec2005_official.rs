//! CEC-2005 F1-F20 against the organisers' verification points
//! (`test_data_func*.txt`: ten 50-D points, lines 1-10, and their values,
//! lines 11-20), noise off for F4 and F17.

use fedhe_tasks::benchmarks::cec2005::{parse_rows, Cec2005};

macro_rules! test_file {
    ($n:literal) => {
        (
            $n,
            include_str!(concat!("data/cec2005/test_data_func", $n, ".txt")),
        )
    };
}

#[test]
fn official_test_points_match_to_relative_1e9() {
    let files = [
        test_file!(1),
        test_file!(2),
        test_file!(3),
        test_file!(4),
        test_file!(5),
        test_file!(6),
        test_file!(7),
        test_file!(8),
        test_file!(9),
        test_file!(10),
        test_file!(11),
        test_file!(12),
        test_file!(13),
        test_file!(14),
        test_file!(15),
        test_file!(16),
        test_file!(17),
        test_file!(18),
        test_file!(19),
        test_file!(20),
    ];
    let mut worst: f64 = 0.0;
    let mut failures = Vec::new();
    for (n, text) in files {
        let rows = parse_rows(text);
        assert_eq!(rows.len(), 20, "F{n} file layout");
        let f = Cec2005::new(n, 50).unwrap();
        for i in 0..10 {
            let got = f.evaluate(&rows[i]).unwrap();
            let want = rows[10 + i][0];
            let rel = ((got - want) / want).abs();
            worst = worst.max(rel);
            if rel >= 1e-9 {
                failures.push(format!("F{n} point {i}: {got} vs {want} (rel {rel:e})"));
            }
        }
    }
    println!("worst relative error {worst:e}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
