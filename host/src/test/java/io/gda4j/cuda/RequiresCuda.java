package io.gda4j.cuda;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A GPU test class that cannot run at all without a CUDA device (its {@code @BeforeAll} opens a world). Where there
 * is none the class is disabled with {@link Cuda#status()}'s reason, so every test in it is reported as skipped with
 * that reason; an assumption in {@code @BeforeAll} would instead make the class report "Tests run: 0".
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresCuda.Condition.class)
public @interface RequiresCuda {

    /** Disables the class where no CUDA device exists. */
    final class Condition implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            CudaStatus status = Cuda.status();
            return status.available()
                    ? ConditionEvaluationResult.enabled("CUDA: " + status.deviceCount() + " GPU(s)")
                    : ConditionEvaluationResult.disabled("no CUDA device: " + status.reason());
        }
    }
}
