/* Run an exported model on the sample inputs compiled in by samples.h and print, per sample, the predicted class and
   every output as the hex bits of its float32 value, so two runs (host and board) can be compared bit for bit.
   samples.h is written by `autograd-lab export-c ... --samples N` (or autograd_lab.export.build.write_samples_header)
   and names the model's header and functions. Returns 0 on success, which QEMU passes on as its exit status. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "samples.h"

int main(void)
{
    static float output[MODEL_OUTPUT_SIZE];
    int i, j;
    for (i = 0; i < SAMPLE_COUNT; ++i) {
        if (MODEL_PREDICT(samples[i], output) != 0) {
            printf("sample %d: predict failed\n", i);
            return 2;
        }
        printf("sample %d class %d bits", i, MODEL_ARGMAX(output));
        for (j = 0; j < MODEL_OUTPUT_SIZE; ++j) {
            uint32_t bits;
            memcpy(&bits, &output[j], sizeof bits);
            printf(" %08lx", (unsigned long)bits);
        }
        printf("\n");
    }
    printf("done %d samples\n", SAMPLE_COUNT);
    return 0;
}
