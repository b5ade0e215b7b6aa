using System;
using System.Linq;

class SaysOk
{
    static void Main()
    {
        Console.WriteLine(string.Concat(new[] { 'O', 'K' }.Select(c => c.ToString())));
    }
}
