#!/usr/bin/env python3
"""Build a labelled corpus of real human voices from recordings in Debian packages.

Usage: real_voices.py OUTDIR SPLIT SPEAKER... [--utts N] [--seed S] [--seconds T] [--channel utterance|speaker] [--jobs J]

Each SPEAKER is SOURCE:NAME, one recorded person:
  klettres:LANG     /usr/share/klettres/LANG/{alpha,syllab}  (klettres-data: letters and syllables)
  ktuberling:LANG   /usr/share/ktuberling/sounds/LANG        (ktuberling-data: words)
  asterisk:DIR[+DIR] /usr/share/asterisk/sounds/DIR, recursively (Asterisk prompt packages: sentences)

Recordings are read as WAV, Ogg Vorbis or GSM files (sox, with libsox-fmt-base).

Every clip is silence-trimmed; a speaker's clips are shuffled (seeded by SPLIT, SEED and the speaker)
and joined with 0.3-0.6 s pauses into utterances of about T seconds (default 6). Each utterance goes
through a telephone channel drawn from a seeded generator: a band-pass of 200-400 Hz to
3000-3600 Hz, a level of -26 to -14 dBFS, noise in 40 % of them (white, pink or brown, 15-30 dB
below the speech's peak), and a mu-law round trip. With --channel utterance (the default) each
utterance has a channel of its own, so that one person's utterances differ as one caller's calls do
(for training); with --channel speaker a speaker keeps one channel, as within one call. Output, in
the format earshot eval reads:

  wav/SPEAKER/UTT.wav   8 kHz mono 16-bit PCM
  manifest.csv          wav, ulaw (empty), speaker, utterance, split, source (real), condition
                        (telephone), noise, segments (the trimmed clips' spans: loose ground truth),
                        duration_s, speech_s, package
  speakers.csv          speaker, base_voice, package

The same arguments give byte-identical files. Some sources are reserved for independent evaluation
and refused unless --allow-reserved is given (see RESERVED).
"""
import argparse
import csv
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

SR = 8000
KLETTRES = "/usr/share/klettres"
KTUBERLING = "/usr/share/ktuberling/sounds"
ASTERISK = "/usr/share/asterisk/sounds"
PACKAGES = {"klettres": "klettres-data", "ktuberling": "ktuberling-data", "asterisk": "asterisk prompts"}

# Recordings kept out of training and tuning: the measure of a model on voices it has never met.
KLETTRES_DEV = {"ar", "cs", "da", "de", "en", "es", "fr", "he", "hu", "it"}
RESERVED_ASTERISK = {"ru", "ru_RU", "fr_armelle", "it_menardi"}


def seed_of(*parts):
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def sox(*args):
    subprocess.run(["sox", *args], check=True, stderr=subprocess.DEVNULL)


def duration(path):
    with open(path, "rb") as f:
        f.seek(40)
        return int.from_bytes(f.read(4), "little") / 2 / SR


def clips_of(spec, allow_reserved):
    source, _, name = spec.partition(":")
    if source == "klettres":
        if name not in KLETTRES_DEV and not allow_reserved:
            sys.exit(f"{spec}: klettres-data's other languages are reserved for independent evaluation")
        dirs = [os.path.join(KLETTRES, name, sub) for sub in ("alpha", "syllab")]
    elif source == "ktuberling":
        dirs = [os.path.join(KTUBERLING, name)]
    elif source == "asterisk":
        parts = name.split("+")
        if any(p.lower() in RESERVED_ASTERISK or p.lower().startswith("ru") for p in parts) and not allow_reserved:
            sys.exit(f"{spec}: reserved for independent evaluation")
        dirs = [os.path.join(ASTERISK, p) for p in parts]
    else:
        sys.exit(f"{spec}: unknown source {source!r} (klettres, ktuberling, asterisk)")
    files = []
    for d in dirs:
        if not os.path.isdir(d):
            continue
        for root, subdirs, names in os.walk(d):
            subdirs.sort()
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith((".wav", ".ogg", ".gsm"))]
    if not files:
        sys.exit(f"{spec}: no recordings in {', '.join(dirs)} (is {PACKAGES[source]} installed?)")
    return PACKAGES[source], files


def speaker_id(spec):
    source, _, name = spec.partition(":")
    return "real_" + source[:2] + "_" + name.replace("+", "_").replace("@", "_").lower()


def build(job):
    spec, out, split, seed, utts, seconds, per_utterance, allow_reserved = job
    package, files = clips_of(spec, allow_reserved)
    spk = speaker_id(spec)
    rng = random.Random(seed_of(split, seed, spk))
    rng.shuffle(files)
    tmp = tempfile.mkdtemp()
    os.makedirs(os.path.join(out, "wav", spk), exist_ok=True)
    rows, cur, cur_s, n = [], [], 0.0, 0

    def flush():
        nonlocal n
        lead = 0.3
        parts, segs, pos = [], [], lead
        sox("-n", "-r", str(SR), "-c", "1", "-b", "16", os.path.join(tmp, "lead.wav"), "trim", "0", str(lead))
        parts.append(os.path.join(tmp, "lead.wav"))
        for i, (p, d, gap) in enumerate(cur):
            segs.append(f"{pos:.3f}-{pos + d:.3f}")
            g = os.path.join(tmp, f"gap{i}.wav")
            sox("-n", "-r", str(SR), "-c", "1", "-b", "16", g, "trim", "0", f"{gap:.3f}")
            parts += [p, g]
            pos += d + gap
        raw = os.path.join(tmp, "raw.wav")
        sox(*parts, raw)
        uid = f"{spk}_u{n:02d}"
        rel = f"wav/{spk}/{uid}.wav"
        ch = rng if per_utterance else random.Random(seed_of(split, seed, spk, "channel"))
        lo, hi = ch.randint(200, 400), ch.randint(3000, 3600)
        level = ch.uniform(-26, -14)
        shaped = os.path.join(tmp, "shaped.wav")
        sox(raw, shaped, "highpass", str(lo), "lowpass", str(hi), "norm", f"{level:.1f}")
        noise = "none"
        if ch.random() < 0.4:
            colour, snr = ch.choice(["whitenoise", "pinknoise", "brownnoise"]), ch.uniform(15, 30)
            nz = os.path.join(tmp, "noise.wav")
            sox("-n", "-r", str(SR), "-c", "1", "-b", "16", nz, "synth", f"{pos:.3f}", colour,
                "highpass", str(lo), "lowpass", str(hi), "norm", f"{level - snr:.1f}")
            mixed = os.path.join(tmp, "mixed.wav")
            sox("-m", shaped, nz, mixed)
            shaped, noise = mixed, f"{colour[:-5]} {snr:.0f} dB"
        mu = os.path.join(tmp, "mu.wav")
        sox(shaped, "-e", "mu-law", mu)
        sox(mu, "-e", "signed-integer", "-b", "16", os.path.join(out, rel))
        rows.append({"wav": rel, "ulaw": "", "speaker": spk, "utterance": uid, "split": split, "source": "real",
                     "condition": "telephone", "noise": noise, "segments": ";".join(segs),
                     "duration_s": f"{pos:.3f}", "speech_s": f"{sum(d for _, d, _ in cur):.3f}",
                     "package": package})
        n += 1

    for i, f in enumerate(files):
        if n >= utts:
            break
        p = os.path.join(tmp, f"c{i}.wav")
        try:
            sox(f, "-r", str(SR), "-c", "1", "-b", "16", p, "silence", "1", "0.02", "0.5%", "reverse",
                "silence", "1", "0.02", "0.5%", "reverse")
        except subprocess.CalledProcessError:
            continue
        d = duration(p)
        if not 0.15 <= d <= 8.0:
            continue
        gap = rng.uniform(0.3, 0.6)
        cur.append((p, d, gap))
        cur_s += d + gap
        if cur_s >= seconds:
            flush()
            cur, cur_s = [], 0.0
    if cur and cur_s >= seconds / 2 and n < utts:
        flush()
    shutil.rmtree(tmp)
    print(f"{spk}: {n} utterances", file=sys.stderr)
    return spk, package, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("split")
    ap.add_argument("speakers", nargs="+", metavar="SOURCE:NAME")
    ap.add_argument("--utts", type=int, default=16, help="utterances per speaker, at most (16)")
    ap.add_argument("--seconds", type=float, default=6.0, help="audio per utterance, about (6)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--channel", choices=["utterance", "speaker"], default="utterance",
                    help="draw a telephone channel per utterance (as across calls), or one per speaker (as within a call)")
    ap.add_argument("--allow-reserved", action="store_true", help="for independent evaluation only")
    a = ap.parse_args()
    if a.split in ("dev", "eval"):
        sys.exit("the split names dev and eval belong to the synthetic corpus; choose another")
    jobs = [(s, a.out, a.split, a.seed, a.utts, a.seconds, a.channel == "utterance", a.allow_reserved)
            for s in a.speakers]
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(build, jobs))
    rows = [r for _, _, rs in results for r in rs]
    if not rows:
        sys.exit("no utterances")
    with open(os.path.join(a.out, "manifest.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(a.out, "speakers.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["speaker", "base_voice", "package"])
        for spk, package, _ in results:
            w.writerow([spk, spk, package])
    print(f"{len(results)} speakers, {len(rows)} utterances", file=sys.stderr)


if __name__ == "__main__":
    main()
