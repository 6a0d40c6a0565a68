/* Host test driver for an exported model: reads float32 inputs of @MACRO@_INPUT_SIZE values from stdin until EOF,
   writes @MACRO@_OUTPUT_SIZE float32 outputs per input to stdout (native byte order). Exit status 0 on success. */
#include <stdio.h>

#include "@NAME@.h"

int main(void)
{
    static float input[@MACRO@_INPUT_SIZE];
    static float output[@MACRO@_OUTPUT_SIZE];
    while (fread(input, sizeof input[0], @MACRO@_INPUT_SIZE, stdin) == @MACRO@_INPUT_SIZE) {
        if (@NAME@_predict(input, output) != @MACRO@_OK) {
            return 2;
        }
        if (fwrite(output, sizeof output[0], @MACRO@_OUTPUT_SIZE, stdout) != @MACRO@_OUTPUT_SIZE) {
            return 3;
        }
    }
    return ferror(stdin) ? 4 : 0;
}
