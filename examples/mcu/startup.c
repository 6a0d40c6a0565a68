/* Minimal Cortex-M start-up for the generated models: vector table, reset handler, fault handler.

   Reset: enable the FPU (hard-float builds), copy .data from flash to RAM, zero .bss, open the semihosting
   channel, run main() and exit with its return value, which QEMU turns into its own exit status.
   Any fault ends the run through semihosting with a message, instead of hanging in a loop.
   Register addresses: ARMv7-M Architecture Reference Manual (CPACR at 0xE000ED88, section B3.2.20). */
#include <stdint.h>
#include <stdlib.h>

extern int main(void);
extern void initialise_monitor_handles(void);

/* Symbols from the linker script (sections.ld). */
extern uint32_t _estack;
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss;

void Reset_Handler(void);
void Fault_Handler(void);

#define CPACR (*(volatile uint32_t *)0xE000ED88u)

/* Semihosting: operation number in r0, argument in r1, then BKPT 0xAB (ARM DUI 0471, "Semihosting"). */
static void semihost(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

void Fault_Handler(void)
{
    static const char message[] = "fault: the program crashed (HardFault or other exception); exiting\n";
    semihost(0x04u, message);           /* SYS_WRITE0: print a NUL-terminated string */
    semihost(0x18u, (void *)0x20023u);  /* SYS_EXIT, ADP_Stopped_RunTimeErrorUnknown: QEMU exits with status 1 */
    for (;;) {
    }
}

void Reset_Handler(void)
{
    uint32_t *src = &_sidata;
    uint32_t *dst = &_sdata;
#if defined(__ARM_FP)
    CPACR |= 0xFu << 20; /* full access to coprocessors 10 and 11, the FPU */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    while (dst < &_edata) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss; ++dst) {
        *dst = 0;
    }
    initialise_monitor_handles();
    exit(main());
}

/* The first 16 entries of the vector table: initial stack pointer, then the system exceptions. */
__attribute__((section(".vectors"), used))
static void (*const vector_table[16])(void) = {
    (void (*)(void))&_estack,
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0, 0, 0, 0,
    Fault_Handler, /* SVCall */
    Fault_Handler, /* DebugMonitor */
    0,
    Fault_Handler, /* PendSV */
    Fault_Handler, /* SysTick */
};
