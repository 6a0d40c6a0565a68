/* Host test driver for an exported model: reads float32 inputs of @MACRO@_INPUT_SIZE values from stdin until EOF,
   writes @MACRO@_OUTPUT_SIZE float32 outputs per input to stdout (native byte order).
   Exit status: 0 at EOF after whole inputs, 2 if predict fails, 3 on a write error, 4 on a read error or a truncated
   last input. Every pass of the loop consumes at least one value, so it ends at EOF. */
#include <stdio.h>

#include "@NAME@.h"

#if @MACRO@_INPUT_SIZE < 1 || @MACRO@_OUTPUT_SIZE < 1
#error "the model must read and write at least one value (a zero-size model would make this loop endless)"
#endif

int main(void)
{
    static float input[@MACRO@_INPUT_SIZE];
    static float output[@MACRO@_OUTPUT_SIZE];
    for (;;) {
        /* Counted in bytes, so that a partial last float is seen as a truncated input too. */
        const size_t got = fread(input, 1, sizeof input, stdin);
        if (got != sizeof input) {
            return (got == 0 && feof(stdin) && !ferror(stdin)) ? 0 : 4;
        }
        if (@NAME@_predict(input, output) != @MACRO@_OK) {
            return 2;
        }
        if (fwrite(output, sizeof output[0], @MACRO@_OUTPUT_SIZE, stdout) != @MACRO@_OUTPUT_SIZE) {
            return 3;
        }
    }
}
