import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

public class SampleTest {
    private Sample sample;

    @BeforeEach
    public void setUp() {
        sample = new Sample();
    }

    @Test
    public void evens() {
        assertThat(sample.evens(6)).containsExactly(0, 2, 4, 6);
        assertThat(sample.evens(0)).hasSize(1).isEqualTo(List.of(0));
    }

    @Disabled("Remove to run test")
    @Test
    public void negative() {
        assertThatExceptionOfType(IllegalArgumentException.class)
            .isThrownBy(() -> sample.evens(-1))
            .withMessage("upTo must not be negative");
    }

    @Disabled("Remove to run test")
    @Test
    public void shout() {
        assertThat(sample.shout("hi")).isEqualTo("HI");
    }

    @Test
    public void wrong() {
        assertThat(sample.evens(2)).isEmpty();
    }
}
