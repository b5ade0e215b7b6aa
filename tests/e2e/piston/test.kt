fun main() {
    val word = listOf('O', 'K').joinToString("")
    println(word)
}
