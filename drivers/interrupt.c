/* The signal handler does only async-signal-safe things: it sets a
 * volatile sig_atomic_t flag, or unlinks the listed temporaries, writes
 * one line with write(2) and calls _exit. */
#include "interrupt.h"

#include "krylov.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

/* kr_solve_options.interrupt is a const volatile int *. */
_Static_assert(_Generic((sig_atomic_t)0, int : 1, default : 0),
               "sig_atomic_t must be int");

static volatile sig_atomic_t requested, armed;

static void say(const char *msg)
{
    ssize_t ignored = write(STDERR_FILENO, msg, strlen(msg));
    (void)ignored;
}

static void on_signal(int sig)
{
    (void)sig;
    if (armed && !requested) {
        requested = 1;
        say("\nkrylov: interrupted: stopping at the next iteration "
            "(again to quit at once)\n");
        return;
    }
    kr_outfile_unlink_pending();
    say("\nkrylov: interrupted; unfinished output files removed\n");
    _exit(CLI_EXIT_INTERRUPTED);
}

static void handle(int sig)
{
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN) return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT); /* one handler at a time */
    sigaddset(&sa.sa_mask, SIGTERM);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, NULL);
}

void cli_interrupt_install(void)
{
    handle(SIGINT);
    handle(SIGTERM);
}

void cli_interrupt_arm(void) { armed = 1; }
void cli_interrupt_disarm(void) { armed = 0; }
const volatile int *cli_interrupt_flag(void) { return &requested; }
