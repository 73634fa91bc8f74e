import java.util.ArrayList;
import java.util.List;

/** A stand-in exercise: compiled and tested once at image build time to record the JVM's class data. */
class Sample {
    List<Integer> evens(int upTo) {
        if (upTo < 0) {
            throw new IllegalArgumentException("upTo must not be negative");
        }
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i <= upTo; i += 2) {
            out.add(i);
        }
        return out;
    }

    String shout(String text) {
        throw new UnsupportedOperationException("Delete this statement and write your own implementation.");
    }
}
