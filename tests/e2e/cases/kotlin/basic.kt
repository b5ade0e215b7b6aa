import kotlin.system.exitProcess

fun main() {
    while (true) {
        val line = readLine() ?: break
        val w = line.trim()
        if (w == "crash") exitProcess(3)
        println(w.reversed())
    }
}
