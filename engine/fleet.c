/*
 * fleet.c: the deployment as a fleet: the price: and power: settings, and its GPU-hours, cost
 * and energy for the summary.
 *
 * MODEL: power follows the linear utilisation model (Fan, Weber and Barroso, "Power
 * provisioning for a warehouse-sized computer", ISCA 2007): a GPU draws idle_w while it holds
 * the model and idle_w + (max_w - idle_w) x u, u the fraction of time a forward pass runs on
 * it. All GPUs of a replica run its passes together, so each replica's GPU time (its
 * iterations' GPU work, eng_totals.pool_gpu_ns) counts once per GPU. Figures per GPU come from
 * the catalog (calibration/catalog.c, each row citing its source) unless the scenario overrides
 * them.
 */
#include <math.h>

#include "engine_int.h"

const eng_key eng_price_keys[] = {{"per_gpu_hour_usd", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1e6, "USD",
                                   "(the GPU catalog's list price)", NULL,
                                   "what one GPU costs per hour, for every GPU of the deployment",
                                   ENG_KEY_AT(eng_fleet_cfg, price_per_hour)},
                                  ENG_KEY_END};

/* idle_w may be 0 (a GPU that sleeps when idle): given is told apart from absent. */
static void set_idle(void *obj, double w)
{
    eng_fleet_cfg *f = obj;
    f->idle_w = w;
    f->idle_given = 1;
}

const eng_key eng_power_keys[] = {
    {"idle_w", ENG_KEY_NUM, 0, 0, 1e5, "W", "(the catalog's: 15% of max_w)", NULL,
     "one GPU's power while it holds the model and computes nothing", .set = set_idle},
    {"max_w", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1e5, "W", "(the GPU's datasheet TDP)", NULL,
     "one GPU's power while a forward pass runs (its board power at full load)",
     ENG_KEY_AT(eng_fleet_cfg, max_w)},
    ENG_KEY_END};

/* Absent keys stay 0: the admission map's presence is either key given, and an absent one
 * takes its default (eng_admission_shed). */
const eng_key eng_admission_keys[] = {
    {"queue_depth", ENG_KEY_INT, ENG_KEY_DOUBLE, 1, 1e9, "requests", "(5)", NULL,
     "a replica with this many requests waiting is saturated",
     ENG_KEY_AT(eng_fleet_cfg, shed_queue)},
    {"kv_utilisation", ENG_KEY_NUM, ENG_KEY_LO_OPEN, 0, 1, "", "(0.8)", NULL,
     "a replica with this KV usage is saturated", ENG_KEY_AT(eng_fleet_cfg, shed_kv)},
    ENG_KEY_END};

void eng_fleet_defaults(eng_fleet_cfg *f)
{
    eng_keys_defaults(eng_autoscale_keys, &f->autoscale);
    eng_keys_defaults(eng_fault_retry_keys, &f->faults);
    for (int k = 0; k < 2; k++) {
        eng_autoscale_cfg *a = &f->pool_autoscale[k];
        eng_keys_defaults(eng_pool_autoscale_keys, a);
        /* MODEL: the planner's per-pool defaults (autoscale.c, eng_pool_autoscale_keys): the
         * prefill queue against 0.5 / 0.2 with the queue's trend over 3 intervals; decode KV
         * usage against 0.9 / 0.5 with no scale-down for 3 adjustments after a scale-up */
        a->metric = k ? ENG_AS_KV : ENG_AS_QUEUE;
        a->up_threshold = k ? 0.9 : 0.5;
        a->down_threshold = k ? 0.5 : 0.2;
        a->grace_intervals = k ? 3 : 0;
        a->trend_intervals = k ? 0 : 3;
    }
}

int eng_admission_shed(const eng_engine *e, const eng_pool *p)
{
    /* MODEL: the Gateway API Inference Extension's saturation detector (pkg/epp/
     * saturationdetector: DefaultQueueDepthThreshold 5, DefaultKVCacheUtilThreshold 0.8): a pod
     * has room while its waiting queue and its KV usage are both below the thresholds; when no
     * pod has room the request director drops sheddable requests (HTTP 429). Every request is
     * sheddable without request classes (eng_admission_sheddable). */
    const eng_fleet_cfg *f = &e->cfg.fleet;
    double queue = f->shed_queue > 0 ? f->shed_queue : 5, kv = f->shed_kv > 0 ? f->shed_kv : 0.8;
    for (int32_t i = 0; i < p->nact; i++) {
        const eng_replica *r = p->rep_list[i];
        if ((double)r->waiting < queue && eng_replica_kv_usage(r) < kv)
            return 0;
    }
    return 1;
}

int eng_admission_sheddable(const eng_engine *e, const eng_request *rq)
{
    /* MODEL: the Gateway API Inference Extension's LegacyAdmissionController
     * (pkg/epp/requestcontrol/admission.go, rejectIfSheddableAndSaturated): only sheddable
     * requests (InferenceObjective priority < 0) are shed when the pool is saturated; the others
     * are admitted whatever the load. Without classes every request is sheddable. */
    const eng_classes *cl = &e->cfg.classes;
    return cl->n == 0 || cl->c[rq->wclass].sheddable;
}

double eng_fleet_gpu_price(const eng_fleet_cfg *f, const eng_gpu *g)
{
    return f->price_per_hour > 0 ? f->price_per_hour : g->price_per_hour;
}

/* GPU g's figures with the deployment's overrides: price per hour, idle and full power. */
static void figures(const eng_fleet_cfg *f, const eng_gpu *g, double *price, double *idle,
                    double *max)
{
    *price = eng_fleet_gpu_price(f, g);
    *max = f->max_w > 0 ? f->max_w : g->max_w;
    *idle = f->idle_given ? f->idle_w : g->idle_w;
}

int eng_fleet_check(const eng_config *c, sim_err *err)
{
    if (eng_admission_on(&c->fleet) && c->pd.enabled)
        return sim_errf(err, "admission: shedding in front of a disaggregated deployment is not "
                             "modelled yet");
    for (int k = 0; k < eng_config_pools(c); k++) {
        eng_config pc;
        double price, idle, max;
        eng_config_pool(c, k, &pc);
        figures(&c->fleet, &pc.gpu, &price, &idle, &max);
        if (max > 0 && idle > max)
            return sim_errf(err, "power: idle_w (%g W) above max_w (%g W) for GPU %s", idle, max,
                            pc.gpu.name);
    }
    return 0;
}

void eng_fleet_fill(eng_engine *e)
{
    double dur = eng_metrics_duration(&e->m), gpu_s = 0, cost = 0, joules = 0;
    int64_t gpu_ns = 0; /* autoscaled: the timeline's GPU time, whose sum this is to the bit */
    for (int k = 0; k < e->npools; k++) {
        const eng_pool *p = &e->pools[k];
        double price, idle, max;
        figures(&e->cfg.fleet, &p->cfg.gpu, &price, &idle, &max);
        /* a pipelined replica's virtual engines share its GPUs */
        double gpus = (double)p->plan.gpus * p->nrep / eng_pipe_batches(&p->cfg),
               pool_s = gpus * dur;
        if (e->as) { /* autoscaled: the replicas' GPUs while they were held, summed in ns */
            int64_t ns =
                (int64_t)p->plan.gpus *
                eng_autoscale_held_ns(e, p, e->m.t_first_arrival,
                                      e->m.completed ? e->m.t_last_finish : e->m.t_first_arrival);
            gpu_ns += ns;
            pool_s = (double)ns / 1e9;
        }
        double busy_s = (double)p->plan.gpus * (double)e->tot.pool_gpu_ns[k] / 1e9;
        gpu_s += pool_s;
        cost += price > 0 ? price * (pool_s / 3600) : NAN;
        joules += max > 0 ? idle * pool_s + (max - idle) * busy_s : NAN;
    }
    e->m.fleet_gpu_s = e->as ? (double)gpu_ns / 1e9 : gpu_s;
    e->m.fleet_cost_usd = cost;
    e->m.fleet_energy_j = joules;
}
