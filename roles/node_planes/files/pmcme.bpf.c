// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pmcme.bpf.c - the PMCME per-stream port spreading (Fukunaga, "A Portable
 * Method for Improving Available Bandwidth of PC Cluster") as two tc
 * classifiers in direct-action mode, for ethercluster.routing's node_planes
 * role (docs/planes.md, "Node modes").
 *
 * The paper patches the Linux bonding module's transmit function (section 4).
 * Here the node keeps its P ports as ordinary interfaces; applications talk
 * to the peers' primary addresses, which the kernel routes out of port 0.
 * pmcme_egress runs on port 0's egress and moves each TCP stream to the
 * port the algorithm picks; pmcme_ingress runs on every port's ingress and
 * only watches acknowledgements.
 *
 *  - High-bandwidth stream (section 3.2): the paper compares the socket's
 *    write_seq - snd_una with 7,000. A classifier sees packets, not sockets,
 *    so it keeps per stream the highest sequence sent (egress) and the
 *    highest acknowledgement received (ingress): the bytes sent and not yet
 *    acknowledged, compared with the same threshold (cfg.threshold).
 *  - Port_Info (Table 1) and Reg_Info (section 4): a high-bandwidth stream
 *    gets the next port in round-robin order and the next of that port's
 *    cfg.per_port (100) slots; the stream that held the slot before is
 *    removed from Port_Info (the paper's ageing: a port remembers its last
 *    100 streams; an evicted stream still running is registered again).
 *  - Streams not (yet) high-bandwidth go out port by port in round-robin
 *    order, packet by packet (section 3.2), so that every switch keeps
 *    learning every port. A stream already in Port_Info keeps its port even
 *    while its unacknowledged bytes dip under the threshold (our reading of
 *    Fig. 8: it avoids reordering a registered stream).
 *  - MAC table (Table 2): (destination node's port 0 MAC, port X) -> the MAC
 *    of the destination's port X. A frame sent from port X > 0 gets that
 *    destination MAC and port X's own source MAC, and is redirected to port
 *    X's egress, so port X of the sender reaches port X of the receiver
 *    through switch (plane) X only. Frames from port 0 are left as they are.
 *
 * Every table is a BPF map (pinned by the role; docs/planes.md shows how to
 * read them with bpftool).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define PMC_MAX_PORTS 16
#define PMC_MAX_PER_PORT 100
#define PMC_HDR_LEN (sizeof(struct ethhdr) + sizeof(struct iphdr) + sizeof(struct tcphdr))

/* One TCP stream, as this node sends it (ingress keys are reversed). */
struct pmc_stream_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
};

/* Per stream: highest sequence sent + 1, highest acknowledgement seen. */
struct pmc_stream {
	__u32 seq_hi;
	__u32 ack_hi;
	__u64 last_ns;
	__u64 tx_bytes;
};

/* Table 1 (Port_Info): the port of a registered stream and its slot. */
struct pmc_port_info {
	__u32 port;
	__u32 slot;
	__u64 registered_ns;
};

/* Table 2 (MAC table): (destination's port 0 MAC, port) -> new MAC. */
struct pmc_mac_key {
	__u8 node_mac[6];
	__u16 port;
};

struct pmc_mac {
	__u8 mac[6];
	__u16 pad;
};

/* This node's ports: ifindex and own MAC, index = port number. */
struct pmc_port {
	__u32 ifindex;
	__u8 mac[6];
	__u16 pad;
};

struct pmc_config {
	__u32 nports;
	__u32 threshold;
	__u32 per_port;
	__u32 pad;
};

/* Round-robin cursors and the per-port slot counters (NOperPort). */
struct pmc_rr {
	__u32 stream_next;
	__u32 packet_next;
	__u32 slot_next[PMC_MAX_PORTS];
};

/* Per port: frames and bytes sent by the program, streams registered. */
struct pmc_stat {
	__u64 packets;
	__u64 bytes;
	__u64 registered;
	__u64 no_mac;
};

/* One BPF map (libbpf's BTF-defined form). */
#define PMC_MAP(name, kind, entries, key_type, value_type) \
	struct { \
		__uint(type, kind); \
		__uint(max_entries, entries); \
		__type(key, key_type); \
		__type(value, value_type); \
	} name SEC(".maps")

PMC_MAP(pmc_config, BPF_MAP_TYPE_ARRAY, 1, __u32, struct pmc_config);
PMC_MAP(pmc_ports, BPF_MAP_TYPE_ARRAY, PMC_MAX_PORTS, __u32, struct pmc_port);
PMC_MAP(pmc_mac_table, BPF_MAP_TYPE_HASH, 4096, struct pmc_mac_key, struct pmc_mac);
PMC_MAP(pmc_streams, BPF_MAP_TYPE_LRU_HASH, 16384, struct pmc_stream_key, struct pmc_stream);
PMC_MAP(pmc_port_info, BPF_MAP_TYPE_HASH, PMC_MAX_PORTS * PMC_MAX_PER_PORT, struct pmc_stream_key, struct pmc_port_info);
PMC_MAP(pmc_reg_info, BPF_MAP_TYPE_ARRAY, PMC_MAX_PORTS * PMC_MAX_PER_PORT, __u32, struct pmc_stream_key);
PMC_MAP(pmc_rr, BPF_MAP_TYPE_ARRAY, 1, __u32, struct pmc_rr);
PMC_MAP(pmc_stats, BPF_MAP_TYPE_PERCPU_ARRAY, PMC_MAX_PORTS, __u32, struct pmc_stat);

static __always_inline int seq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/* The TCP/IPv4 headers of the frame, or NULL (anything else passes). */
static __always_inline struct tcphdr *pmc_tcp(struct __sk_buff *skb, struct iphdr **ip)
{
	void *data, *end;
	struct ethhdr *eth;
	struct iphdr *iph;
	struct tcphdr *tcp;

	if (bpf_skb_pull_data(skb, PMC_HDR_LEN) < 0)
		return NULL;
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	eth = data;
	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return NULL;
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > end || iph->protocol != IPPROTO_TCP || iph->ihl != 5)
		return NULL;
	tcp = (void *)(iph + 1);
	if ((void *)(tcp + 1) > end)
		return NULL;
	*ip = iph;
	return tcp;
}

/* Section 4, Fig. 8: register a high-bandwidth stream on the next port
 * (round robin) and the next slot of that port (Reg_Info), evicting the
 * stream that held the slot from Port_Info. Returns the port. */
static __always_inline __u32 pmc_register(struct pmc_stream_key *key, struct pmc_config *cfg)
{
	__u32 zero = 0, port, slot, index;
	struct pmc_rr *rr = bpf_map_lookup_elem(&pmc_rr, &zero);
	struct pmc_stream_key *old;
	struct pmc_port_info info = {};
	struct pmc_stat *stat;

	if (!rr)
		return 0;
	port = __sync_fetch_and_add(&rr->stream_next, 1) % cfg->nports;
	if (port >= PMC_MAX_PORTS)
		return 0;
	slot = __sync_fetch_and_add(&rr->slot_next[port], 1) % cfg->per_port;
	index = port * PMC_MAX_PER_PORT + slot;
	old = bpf_map_lookup_elem(&pmc_reg_info, &index);
	if (!old)
		return 0;
	if (old->saddr || old->daddr || old->sport || old->dport)
		bpf_map_delete_elem(&pmc_port_info, old);
	bpf_map_update_elem(&pmc_reg_info, &index, key, BPF_ANY);
	info.port = port;
	info.slot = slot;
	info.registered_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&pmc_port_info, key, &info, BPF_ANY);
	stat = bpf_map_lookup_elem(&pmc_stats, &port);
	if (stat)
		stat->registered++;
	return port;
}

/* Section 3.2: the unacknowledged bytes of the stream after this packet. */
static __always_inline __u32 pmc_unacked(struct pmc_stream_key *key, __u32 seq, __u32 seq_end, __u32 len)
{
	struct pmc_stream *st = bpf_map_lookup_elem(&pmc_streams, key);
	struct pmc_stream fresh = {};

	if (!st) {
		fresh.seq_hi = seq_end;
		fresh.ack_hi = seq;
		fresh.last_ns = bpf_ktime_get_ns();
		fresh.tx_bytes = len;
		bpf_map_update_elem(&pmc_streams, key, &fresh, BPF_ANY);
		return seq_end - seq;
	}
	if (seq_after(seq_end, st->seq_hi))
		st->seq_hi = seq_end;
	st->last_ns = bpf_ktime_get_ns();
	st->tx_bytes += len;
	if (!seq_after(st->seq_hi, st->ack_hi))
		return 0;
	return st->seq_hi - st->ack_hi;
}

/* The port for this packet: Port_Info's for a registered stream, a new
 * registration for a high-bandwidth one, else packet round robin. */
static __always_inline __u32 pmc_choose(struct pmc_stream_key *key, struct pmc_config *cfg, __u32 unacked)
{
	__u32 zero = 0;
	struct pmc_port_info *info = bpf_map_lookup_elem(&pmc_port_info, key);
	struct pmc_rr *rr;

	if (info)
		return info->port;
	if (unacked > cfg->threshold)
		return pmc_register(key, cfg);
	rr = bpf_map_lookup_elem(&pmc_rr, &zero);
	if (!rr)
		return 0;
	return __sync_fetch_and_add(&rr->packet_next, 1) % cfg->nports;
}

SEC("tc")
int pmcme_egress(struct __sk_buff *skb)
{
	__u32 zero = 0, port, seq, seq_end, payload, unacked;
	struct pmc_config *cfg = bpf_map_lookup_elem(&pmc_config, &zero);
	struct pmc_stream_key key = {};
	struct pmc_mac_key mkey = {};
	struct pmc_port *out;
	struct pmc_mac *peer;
	struct pmc_stat *stat;
	struct iphdr *iph;
	struct tcphdr *tcp;
	struct ethhdr *eth;

	if (!cfg || cfg->nports < 2 || cfg->nports > PMC_MAX_PORTS || !cfg->per_port ||
	    cfg->per_port > PMC_MAX_PER_PORT)
		return TC_ACT_OK;
	tcp = pmc_tcp(skb, &iph);
	if (!tcp)
		return TC_ACT_OK;
	key.saddr = iph->saddr;
	key.daddr = iph->daddr;
	key.sport = tcp->source;
	key.dport = tcp->dest;
	payload = skb->len - sizeof(struct ethhdr) - sizeof(struct iphdr) - tcp->doff * 4;
	seq = bpf_ntohl(tcp->seq);
	seq_end = seq + payload + tcp->syn + tcp->fin;
	eth = (void *)(long)skb->data;
	if ((void *)(eth + 1) > (void *)(long)skb->data_end)
		return TC_ACT_OK;
	__builtin_memcpy(mkey.node_mac, eth->h_dest, 6);
	unacked = pmc_unacked(&key, seq, seq_end, skb->len);
	port = pmc_choose(&key, cfg, unacked);
	if (port >= PMC_MAX_PORTS)
		return TC_ACT_OK;
	stat = bpf_map_lookup_elem(&pmc_stats, &port);
	if (port == 0) {
		if (stat) {
			stat->packets++;
			stat->bytes += skb->len;
		}
		return TC_ACT_OK;
	}
	mkey.port = port;
	peer = bpf_map_lookup_elem(&pmc_mac_table, &mkey);
	out = bpf_map_lookup_elem(&pmc_ports, &port);
	if (!peer || !out || !out->ifindex) {
		/* not a planes peer (or no such port): port 0, unchanged */
		if (stat)
			stat->no_mac++;
		return TC_ACT_OK;
	}
	if (bpf_skb_store_bytes(skb, 0, peer->mac, 6, 0) < 0 ||
	    bpf_skb_store_bytes(skb, 6, out->mac, 6, 0) < 0)
		return TC_ACT_OK;
	if (stat) {
		stat->packets++;
		stat->bytes += skb->len;
	}
	return bpf_redirect(out->ifindex, 0);
}

SEC("tc")
int pmcme_ingress(struct __sk_buff *skb)
{
	struct pmc_stream_key key = {};
	struct pmc_stream *st;
	struct iphdr *iph;
	struct tcphdr *tcp = pmc_tcp(skb, &iph);
	__u32 ack;

	if (!tcp || !tcp->ack)
		return TC_ACT_OK;
	/* the stream this acknowledges is the one we send: addresses reversed */
	key.saddr = iph->daddr;
	key.daddr = iph->saddr;
	key.sport = tcp->dest;
	key.dport = tcp->source;
	st = bpf_map_lookup_elem(&pmc_streams, &key);
	if (!st)
		return TC_ACT_OK;
	ack = bpf_ntohl(tcp->ack_seq);
	if (seq_after(ack, st->ack_hi))
		st->ack_hi = ack;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
