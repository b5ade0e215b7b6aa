class Adder {
    companion object {
        @JvmStatic fun main(args: Array<String>) {
            val (a, b) = readLine()!!.trim().split(" ").map { it.toInt() }
            println(a + b)
        }
    }
}
