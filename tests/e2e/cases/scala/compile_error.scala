object Main {
  def main(args: Array[String]): Unit = {
    val x: Int = "not a number"
    println(x)
  }
}
