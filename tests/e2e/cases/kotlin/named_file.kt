// The request names the file Main.kt, as a project would: its top-level
// functions compile to the class MainKt.
fun main() {
    val (a, b) = readLine()!!.trim().split(" ").map { it.toLong() }
    println(a + b)
}
