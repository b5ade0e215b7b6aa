fn main() {
    let mut i: u64 = 0;
    loop {
        // a volatile write keeps the optimiser from touching the loop
        unsafe { std::ptr::write_volatile(&mut i, i.wrapping_add(1)) };
    }
}
