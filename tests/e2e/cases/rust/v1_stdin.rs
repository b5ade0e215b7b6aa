use std::io;

// Echoes stdin back unchanged.
fn main() {
    io::copy(&mut io::stdin().lock(), &mut io::stdout().lock()).expect("copy");
}
