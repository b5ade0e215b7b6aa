// A write through a null pointer: the kernel sends SIGSEGV.
fn main() {
    let p: *mut i32 = std::ptr::null_mut();
    unsafe {
        std::ptr::write_volatile(p, 1);
    }
}
