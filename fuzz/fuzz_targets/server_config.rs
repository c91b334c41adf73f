#![no_main]
//! `server_config`: see `fedhe_fuzz::check_server_config`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| fedhe_fuzz::check_server_config(data));
