import java.util.List;

public class SaysOk {
    public static void main(String[] args) {
        System.out.println(String.join("", List.of("O", "K")));
    }
}
