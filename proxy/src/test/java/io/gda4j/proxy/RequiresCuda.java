package io.gda4j.proxy;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaStatus;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A GPU test class that cannot run at all without a CUDA device: disabled there with {@link Cuda#status()}'s reason,
 * so its tests are reported as skipped with it (an assumption in {@code @BeforeAll} reports "Tests run: 0"). The same
 * as host's {@code io.gda4j.cuda.RequiresCuda}, which this module's tests cannot see (host ships no test jar).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresCuda.Condition.class)
@interface RequiresCuda {

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
