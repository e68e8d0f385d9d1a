/*
 * A recording verbs provider for VerbsPosterTest: one ibv_context whose ops.post_send and ops.poll_cq are the
 * functions below, one ibv_qp and one ibv_cq on it. post_send reads every work request of the chain through
 * rdma-core's own struct definitions (<infiniband/verbs.h>) and logs its fields, one line per request, so the Java
 * side's bytes are proven against the header; poll_cq completes the logged requests in order, success unless told
 * otherwise. Built as a shared library: gcc -shared -fPIC fake_verbs_provider.c -o libfake_verbs_provider.so
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#define MAX_QUEUED 4096

static struct ibv_context context;
static struct ibv_qp qp;
static struct ibv_cq cq;
static char log_text[1 << 16];
static size_t log_length;
static uint64_t queued[MAX_QUEUED];
static int queued_count, completed_count;
static int post_calls;
static int hold;               /* complete nothing while set */
static int64_t fail_wr_id = -1; /* this request completes with fail_status, the later ones with WR_FLUSH */
static int fail_status, fail_vendor;
static int failed;

static void log_line(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(log_text + log_length, sizeof log_text - log_length, fmt, args);
    va_end(args);
    if (n > 0 && log_length + (size_t)n < sizeof log_text)
        log_length += (size_t)n;
}

static int fake_post_send(struct ibv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
    ++post_calls;
    log_line("post qp=%u\n", q->qp_num);
    for (; wr != NULL; wr = wr->next) {
        if (queued_count == MAX_QUEUED) {
            *bad_wr = wr;
            return ENOMEM;
        }
        log_line("wr id=%llu opcode=%d flags=%u num_sge=%d", (unsigned long long)wr->wr_id, (int)wr->opcode,
                 wr->send_flags, wr->num_sge);
        for (int i = 0; i < wr->num_sge; ++i) {
            const struct ibv_sge *s = &wr->sg_list[i];
            log_line(" sge_length=%u sge_lkey=%u", s->length, s->lkey);
            if (wr->send_flags & IBV_SEND_INLINE) {
                log_line(" inline=");
                for (uint32_t b = 0; b < s->length; ++b)
                    log_line("%02x", ((const uint8_t *)(uintptr_t)s->addr)[b]);
            } else {
                log_line(" sge_addr=%llu", (unsigned long long)s->addr);
            }
        }
        switch (wr->opcode) {
        case IBV_WR_RDMA_WRITE:
        case IBV_WR_RDMA_READ:
            log_line(" remote_addr=%llu rkey=%u", (unsigned long long)wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
            break;
        case IBV_WR_ATOMIC_FETCH_AND_ADD:
        case IBV_WR_ATOMIC_CMP_AND_SWP:
            log_line(" remote_addr=%llu compare_add=%llu swap=%llu rkey=%u",
                     (unsigned long long)wr->wr.atomic.remote_addr, (unsigned long long)wr->wr.atomic.compare_add,
                     (unsigned long long)wr->wr.atomic.swap, wr->wr.atomic.rkey);
            break;
        default:
            break;
        }
        log_line("\n");
        queued[queued_count++] = wr->wr_id;
    }
    return 0;
}

static int fake_poll_cq(struct ibv_cq *c, int num_entries, struct ibv_wc *wc)
{
    int n = 0;
    (void)c;
    while (!hold && n < num_entries && completed_count < queued_count) {
        uint64_t id = queued[completed_count++];
        memset(&wc[n], 0, sizeof wc[n]);
        wc[n].wr_id = id;
        wc[n].qp_num = qp.qp_num;
        if ((int64_t)id == fail_wr_id) {
            wc[n].status = (enum ibv_wc_status)fail_status;
            wc[n].vendor_err = (uint32_t)fail_vendor;
            failed = 1;
        } else {
            wc[n].status = failed ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS;
        }
        ++n;
    }
    return n;
}

void *fake_qp(void)
{
    context.ops.post_send = fake_post_send;
    context.ops.poll_cq = fake_poll_cq;
    qp.context = &context;
    qp.qp_num = 0x4242;
    cq.context = &context;
    return &qp;
}

void *fake_cq(void)
{
    fake_qp();
    return &cq;
}

void fake_reset(void)
{
    log_length = 0;
    log_text[0] = 0;
    queued_count = completed_count = post_calls = hold = failed = 0;
    fail_wr_id = -1;
}

const char *fake_log(void) { return log_text; }
int fake_post_calls(void) { return post_calls; }
void fake_hold(int on) { hold = on; }

void fake_fail(int64_t wr_id, int status, int vendor)
{
    fail_wr_id = wr_id;
    fail_status = status;
    fail_vendor = vendor;
}
