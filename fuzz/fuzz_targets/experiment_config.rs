#![no_main]
//! `experiment_config`: see `fedhe_fuzz::check_experiment_config`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_experiment_config(data));
