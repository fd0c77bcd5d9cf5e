/* SIGINT and SIGTERM in the krylov command. Once installed, a signal
 * removes the temporaries of unfinished output files (io/outfile.h) and
 * exits 130 at once, except while armed (during a solve): then the first
 * one only sets the flag the solve reads (kr_solve_options.interrupt),
 * which stops it at its next iteration, and a second one exits at once. */
#ifndef KR_DRIVERS_INTERRUPT_H
#define KR_DRIVERS_INTERRUPT_H

/* The exit code of an interrupted command (128 + SIGINT, as shells use). */
enum { CLI_EXIT_INTERRUPTED = 130 };

/* Handles SIGINT and SIGTERM (not those ignored when the program started,
 * as for a background job of a non-interactive shell). */
void cli_interrupt_install(void);
/* Arms and disarms the flag: armed, the first signal only sets it. */
void cli_interrupt_arm(void);
void cli_interrupt_disarm(void);
/* The flag, for kr_solve_options.interrupt. */
const volatile int *cli_interrupt_flag(void);

#endif
