package io.gda4j.mlx5;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Optional;

/**
 * A test class whose {@code @BeforeAll} compiles a program against C/C++ headers (the layout and golden tests).
 * Where a tool or header is missing the class is disabled with the reason, so each of its tests is reported as
 * skipped with it (an assumption in {@code @BeforeAll} would report "Tests run: 0" and hide them). With
 * {@value GccProgram#REQUIRE_COMPILERS_PROP_NAME}=true, where the build promises gcc, g++ and the rdma-core headers
 * (CI), the class runs and fails with the reason instead.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresCompilers.Condition.class)
public @interface RequiresCompilers {
    /** Programs that must run with {@code --version}: gcc, g++, nvcc. */
    String[] tools();

    /** Headers gcc must find, as written in {@code #include <...>}. */
    String[] headers() default {};

    /**
     * Whether the build promises these (gcc, g++, libibverbs-dev: README's test prerequisites, installed by
     * {@code .ci/run}); nvcc is not a Debian package, so a class needing it sets false and always just skips.
     */
    boolean promised() default true;

    /** Disables the class when something it needs is missing, unless the build promised it. */
    final class Condition implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            Optional<RequiresCompilers> needs = context.getElement()
                    .flatMap(e -> AnnotationSupport.findAnnotation(e, RequiresCompilers.class));
            if (needs.isEmpty()) {
                return ConditionEvaluationResult.enabled("nothing required");
            }
            Optional<String> missing = GccProgram.missing(List.of(needs.get().tools()), List.of(needs.get().headers()));
            if (missing.isEmpty()) {
                return ConditionEvaluationResult.enabled("tools and headers present");
            }
            if (needs.get().promised() && GccProgram.REQUIRED) {
                return ConditionEvaluationResult.enabled("runs to fail: " + missing.get());
            }
            return ConditionEvaluationResult.disabled(missing.get());
        }
    }
}
