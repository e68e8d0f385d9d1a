package io.gda4j.moe.tensor;

/** Element types of the tensors the MoE calls take and return. */
public enum ElementType {
    /** bfloat16: the hidden states of dispatch (BF16 mode) and of combine. */
    BF16(2, 0),
    /** FP8 e4m3 with one FP32 scale per 128 channels of a row (dispatch in FP8 mode). */
    FP8_E4M3(1, 1),
    FP32(4, 2),
    INT32(4, 3),
    INT64(8, 4);

    private final int bytes;
    private final int code;

    ElementType(int bytes, int code) {
        this.bytes = bytes;
        this.code = code;
    }

    /** Bytes of one element. */
    public int bytes() {
        return bytes;
    }

    /** The code the kernels receive (the parameter blocks' dtype field, MoeParamsHeaderDescriptor; gda4j/moe/params_header.cuh). */
    public int code() {
        return code;
    }
}
