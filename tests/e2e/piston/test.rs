fn main() {
    let word: String = ['O', 'K'].iter().collect();
    println!("{}", word);
}
