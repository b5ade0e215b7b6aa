use std::io::{self, BufRead, Write};
use std::process;

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let w = line.expect("stdin");
        let w = w.trim();
        if w == "crash" {
            process::exit(3);
        }
        let r: String = w.chars().rev().collect();
        writeln!(out, "{}", r).unwrap();
    }
}
