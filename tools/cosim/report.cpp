#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "cosim/rt_config/results_folder.hpp"
#include "cosim/runtime/error.hpp"
#include "csv_table.hpp"
#include "json_value.hpp"

namespace cosim::cli {

namespace {

namespace fs = std::filesystem;
using jkind = json_value::kind;

// Plot area in pixels: decimation keeps at most two points per pixel column.
constexpr int plot_w = 880;
constexpr int plot_h = 220;
constexpr int margin_l = 70;
constexpr int margin_r = 20;
constexpr int margin_t = 24;
constexpr int margin_b = 34;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// Names become element ids: keep letters, digits, '-' and '_'.
std::string id_of(const std::string& s) {
  std::string o;
  for (char c : s) o += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return o;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  COSIM_INPUT_CHECK(in.good(), errc::io, path + ": cannot read (missing?)");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json_value read_summary(const std::string& path) {
  const std::string text = read_text(path);
  json_value v;
  std::string why;
  try {
    v = parse_json(text);
  } catch (const std::exception& e) {
    why = e.what();
  }
  COSIM_INPUT_CHECK(why.empty() && v.k == jkind::object, errc::io,
                    path + ": not valid JSON" +
                        (why.empty() ? " (not an object)" : " (" + why + ")") +
                        "; expected the summary.json a cosim run writes");
  return v;
}

std::optional<double> number_at(const json_value& o, std::initializer_list<const char*> keys) {
  const json_value* v = &o;
  for (const char* k : keys) {
    v = v->find(k);
    if (v == nullptr) return std::nullopt;
  }
  if (v->k == jkind::number) return v->num;
  return std::nullopt;
}

std::string text_of(const json_value& v) {
  return v.k == jkind::string ? v.str : v.dump();
}

std::string string_at(const json_value& o, const char* key) {
  const json_value* v = o.find(key);
  return v == nullptr ? "" : text_of(*v);
}

// Indented JSON for the configuration block.
void pretty(const json_value& v, std::string& out, int indent) {
  const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
  if (v.k == jkind::object) {
    const auto* o = &v.obj;
    if (o->empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    bool first = true;
    for (const auto& kv : *o) {
      if (!first) out += ",\n";
      first = false;
      out += pad + "  " + json_value{jkind::string, false, 0.0, kv.first, {}, {}}.dump() + ": ";
      pretty(kv.second, out, indent + 1);
    }
    out += "\n" + pad + "}";
  } else if (v.k == jkind::array) {
    const auto* a = &v.arr;
    if (a->empty()) {
      out += "[]";
      return;
    }
    out += "[\n";
    for (std::size_t i = 0; i < a->size(); ++i) {
      out += pad + "  ";
      pretty((*a)[i], out, indent + 1);
      out += i + 1 < a->size() ? ",\n" : "\n";
    }
    out += pad + "]";
  } else {
    out += v.dump();
  }
}

struct series {
  const std::vector<double>* t = nullptr;
  std::vector<double> y;
  std::string color;
  std::string label;
};

struct hline {
  double y = 0.0;
  std::string label;
};

// Min/max per pixel column, in time order within the column: the envelope of every sample,
// so a one-sample spike still reaches its pixel.
std::string envelope_path(const std::vector<double>& t, const std::vector<double>& y, double t0,
                          double t1, double y0, double y1) {
  std::string d;
  const double sx = plot_w / (t1 - t0);
  const double sy = plot_h / (y1 - y0);
  auto point = [&](int col, double v, bool move) {
    d += move ? 'M' : 'L';
    d += px(margin_l + col + 0.5) + ',' + px(margin_t + plot_h - (v - y0) * sy) + ' ';
  };
  int col = -1;
  double lo = 0.0, hi = 0.0;
  std::size_t lo_i = 0, hi_i = 0;
  bool have = false, pen_down = false;
  auto flush = [&] {
    if (!have) return;
    const bool lo_first = lo_i <= hi_i;
    point(col, lo_first ? lo : hi, !pen_down);
    point(col, lo_first ? hi : lo, false);
    pen_down = true;
    have = false;
  };
  for (std::size_t i = 0; i < t.size() && i < y.size(); ++i) {
    if (!std::isfinite(y[i]) || !std::isfinite(t[i])) {
      flush();
      pen_down = false;  // a gap: non-finite samples are not drawn
      continue;
    }
    const int c = std::clamp(static_cast<int>((t[i] - t0) * sx), 0, plot_w - 1);
    if (c != col) {
      flush();
      col = c;
    }
    if (!have) {
      lo = hi = y[i];
      lo_i = hi_i = i;
      have = true;
    } else {
      if (y[i] < lo) lo = y[i], lo_i = i;
      if (y[i] > hi) hi = y[i], hi_i = i;
    }
  }
  flush();
  return d;
}

/// Tick values for [lo, hi]: multiples of 1, 2 or 5 x 10^k, about `want` of them, so that
/// labels read 0, 0.5, 1 ... rather than fractions of the range (76.3506).
std::vector<double> nice_ticks(double lo, double hi, int want) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  const double raw = (hi - lo) / want;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  if (!(mag > 0.0) || !std::isfinite(mag)) return {lo, hi};  // a range too small or too wide
  double step = 10.0 * mag;
  for (const double m : {1.0, 2.0, 5.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  const double first = std::ceil(lo / step);
  // At most a few dozen ticks; a range far from zero relative to its width (1e15 + [0, 1])
  // cannot count tick indices in doubles: there the ends are the labels.
  const double count = std::floor(hi / step) - first;
  if (!(count >= 0.0 && count <= 4.0 * want) || std::abs(first) > 1e12) return {lo, hi};
  for (int k = 0; k <= static_cast<int>(count); ++k) {
    const double v = (first + k) * step;
    ticks.push_back(std::abs(first + k) < 0.5 ? 0.0 : v);  // no "-0"
  }
  return ticks;
}

/// A tick label: the value with no more digits than the tick step needs.
std::string tick_label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string frame(const std::string& xlabel) {
  return "<rect x=\"" + std::to_string(margin_l) + "\" y=\"" + std::to_string(margin_t) +
         "\" width=\"" + std::to_string(plot_w) + "\" height=\"" + std::to_string(plot_h) +
         "\" fill=\"#fff\" stroke=\"#888\"/><text x=\"" + std::to_string(margin_l + plot_w / 2) +
         "\" y=\"" + std::to_string(margin_t + plot_h + 30) + "\" text-anchor=\"middle\">" +
         escape(xlabel) + "</text>";
}

/// A horizontal grid line and its label at the pixel row `yy`.
std::string y_tick(double yy, const std::string& label) {
  return "<line x1=\"" + std::to_string(margin_l) + "\" x2=\"" + std::to_string(margin_l + plot_w) +
         "\" y1=\"" + px(yy) + "\" y2=\"" + px(yy) +
         "\" stroke=\"#eee\"/><text class=\"ytick\" x=\"" + std::to_string(margin_l - 4) +
         "\" y=\"" + px(yy + 4) + "\" text-anchor=\"end\">" + label + "</text>";
}

std::string x_ticks(double x0, double x1) {
  std::string s;
  for (const double v : nice_ticks(x0, x1, 5)) {
    const double xx = margin_l + (v - x0) / (x1 - x0) * plot_w;
    s += "<text class=\"xtick\" x=\"" + px(xx) + "\" y=\"" +
         std::to_string(margin_t + plot_h + 14) + "\" text-anchor=\"middle\">" + tick_label(v) +
         "</text>";
  }
  return s;
}

std::string axes(double x0, double x1, double y0, double y1, const std::string& xlabel) {
  std::string s = frame(xlabel);
  for (const double v : nice_ticks(y0, y1, 4))
    s += y_tick(margin_t + plot_h - (v - y0) / (y1 - y0) * plot_h, tick_label(v));
  return s + x_ticks(x0, x1);
}

std::string svg_open(const std::string& id, const std::string& title) {
  const int w = margin_l + plot_w + margin_r;
  const int h = margin_t + plot_h + margin_b;
  return "<svg class=\"plot\" id=\"" + id + "\" width=\"" + std::to_string(w) + "\" height=\"" +
         std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) +
         "\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"" + std::to_string(margin_l) +
         "\" y=\"16\" class=\"title\">" + escape(title) + "</text>";
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string s;
  int x = margin_l + plot_w;
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    x -= static_cast<int>(it->second.size()) * 7 + 24;
    s += "<rect x=\"" + std::to_string(x) + "\" y=\"8\" width=\"12\" height=\"3\" fill=\"" +
         it->first + "\"/><text x=\"" + std::to_string(x + 16) + "\" y=\"14\">" +
         escape(it->second) + "</text>";
  }
  return s;
}

/// A time plot of `lines` with horizontal limit lines and the stop time marked.
std::string time_plot(const std::string& id, const std::string& title,
                      const std::vector<series>& lines, const std::vector<hline>& limits,
                      double stop_time) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double t0 = inf, t1 = -inf, y0 = inf, y1 = -inf;
  for (const auto& s : lines) {
    for (std::size_t i = 0; i < s.t->size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      t0 = std::min(t0, (*s.t)[i]);
      t1 = std::max(t1, (*s.t)[i]);
      y0 = std::min(y0, s.y[i]);
      y1 = std::max(y1, s.y[i]);
    }
  }
  for (const auto& l : limits) y0 = std::min(y0, l.y), y1 = std::max(y1, l.y);
  if (std::isfinite(stop_time)) t0 = std::min(t0, stop_time), t1 = std::max(t1, stop_time);
  if (!(t0 < t1)) t0 = std::isfinite(t0) ? t0 - 1 : 0, t1 = t0 + 2;
  if (!(y0 < y1)) y0 = std::isfinite(y0) ? y0 - 1 : -1, y1 = y0 + 2;
  const double pad = (y1 - y0) * 0.05;
  y0 -= pad;
  y1 += pad;
  std::string s = svg_open(id, title) + axes(t0, t1, y0, y1, "t [s]");
  std::vector<std::pair<std::string, std::string>> items;
  for (const auto& l : lines) {
    s += "<path fill=\"none\" stroke=\"" + l.color + "\" stroke-width=\"1.2\" d=\"" +
         envelope_path(*l.t, l.y, t0, t1, y0, y1) + "\"/>";
    items.emplace_back(l.color, l.label);
  }
  for (const auto& l : limits) {
    const double yy = margin_t + plot_h - (l.y - y0) * plot_h / (y1 - y0);
    s += "<line class=\"limit\" x1=\"" + std::to_string(margin_l) + "\" x2=\"" +
         std::to_string(margin_l + plot_w) + "\" y1=\"" + px(yy) + "\" y2=\"" + px(yy) +
         "\" stroke=\"#d00\" stroke-dasharray=\"6 3\"/><text x=\"" + std::to_string(margin_l + 4) +
         "\" y=\"" + px(yy - 3) + "\" fill=\"#d00\">" + escape(l.label) + "</text>";
  }
  if (std::isfinite(stop_time)) {
    const double xx = margin_l + (stop_time - t0) * plot_w / (t1 - t0);
    s += "<line class=\"stop\" x1=\"" + px(xx) + "\" x2=\"" + px(xx) + "\" y1=\"" +
         std::to_string(margin_t) + "\" y2=\"" + std::to_string(margin_t + plot_h) +
         "\" stroke=\"#f80\" stroke-width=\"1.5\"/><text x=\"" + px(xx - 3) + "\" y=\"" +
         std::to_string(margin_t + 12) + "\" text-anchor=\"end\" fill=\"#c60\">stop " +
         num(stop_time) + " s</text>";
  }
  s += legend(items) + "</svg>\n";
  return s;
}

/// A histogram of `v` [us] with the deadline (H) drawn. Counts are on a log scale (the rare
/// slow steps are what matters and must stay visible): a bar of count c is log10(1 + c) high,
/// and the axis is labelled 1, 10, 100 ... at those same heights, so the label at a bar's top
/// is its count.
std::string histogram(const std::string& id, const std::string& title, const std::vector<double>& v,
                      double deadline_us) {
  constexpr int bins = 60;
  double hi = deadline_us > 0.0 ? deadline_us : 0.0;
  for (double x : v)
    if (std::isfinite(x)) hi = std::max(hi, x);
  hi = hi > 0.0 ? hi * 1.05 : 1.0;
  std::vector<std::size_t> count(bins, 0);
  for (double x : v)
    if (std::isfinite(x))
      ++count[static_cast<std::size_t>(std::clamp(static_cast<int>(x / hi * bins), 0, bins - 1))];
  const std::size_t top = std::max<std::size_t>(1, *std::max_element(count.begin(), count.end()));
  // The axis reaches the next power of ten, so the largest bar is under a labelled line.
  double decade_top = 1.0;
  while (decade_top < static_cast<double>(top)) decade_top *= 10.0;
  const double ltop = std::log10(decade_top + 1.0);
  const auto height = [&](double c) { return std::log10(c + 1.0) / ltop * plot_h; };
  std::string s = svg_open(id, title) + frame("us");
  s += y_tick(margin_t + plot_h, "0");
  for (double d = 1.0; d <= decade_top; d *= 10.0)
    s += y_tick(margin_t + plot_h - height(d), tick_label(d));
  s += x_ticks(0.0, hi);
  s += "<text x=\"" + std::to_string(margin_l + 4) + "\" y=\"" + std::to_string(margin_t + 12) +
       "\">steps per bin (log scale), " + std::to_string(v.size()) + " steps</text>";
  const double bw = static_cast<double>(plot_w) / bins;
  for (int b = 0; b < bins; ++b) {
    const std::size_t c = count[static_cast<std::size_t>(b)];
    if (c == 0) continue;
    const double h = height(static_cast<double>(c));
    s += "<rect class=\"bar\" data-count=\"" + std::to_string(c) + "\" x=\"" +
         px(margin_l + b * bw + 0.5) + "\" y=\"" + px(margin_t + plot_h - h) + "\" width=\"" +
         px(bw - 1.0) + "\" height=\"" + px(h) + "\" fill=\"#48c\"><title>" + num(b * hi / bins) +
         "-" + num((b + 1) * hi / bins) + " us: " + std::to_string(c) + " steps</title></rect>";
  }
  if (deadline_us > 0.0) {
    const double xx = margin_l + deadline_us / hi * plot_w;
    s += "<line class=\"deadline\" x1=\"" + px(xx) + "\" x2=\"" + px(xx) + "\" y1=\"" +
         std::to_string(margin_t) + "\" y2=\"" + std::to_string(margin_t + plot_h) +
         "\" stroke=\"#d00\" stroke-dasharray=\"6 3\"/><text x=\"" + px(xx - 3) + "\" y=\"" +
         std::to_string(margin_t + 26) +
         "\" text-anchor=\"end\" fill=\"#d00\">deadline H = " + num(deadline_us) + " us</text>";
  }
  s += "</svg>\n";
  return s;
}

struct thread_timing {
  std::vector<double> wake_us, exec_us;
};

// timing.csv: step,t,subsystem,wakeup_latency_us,exec_us,overrun,skipped_periods
std::map<std::string, thread_timing> read_timing(const std::string& path) {
  std::ifstream in(path);
  COSIM_INPUT_CHECK(in.good(), errc::io, path + ": cannot read");
  std::string line;
  std::getline(in, line);
  COSIM_INPUT_CHECK(line.rfind("step,t,subsystem,wakeup_latency_us,exec_us", 0) == 0, errc::io,
                    path +
                        ": line 1 is not the timing.csv header "
                        "(step,t,subsystem,wakeup_latency_us,exec_us,...)");
  std::map<std::string, thread_timing> out;
  std::size_t n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    double wake = 0.0, exec = 0.0;
    char* e1 = nullptr;
    char* e2 = nullptr;
    if (f.size() >= 5) {
      wake = std::strtod(f[3].c_str(), &e1);
      exec = std::strtod(f[4].c_str(), &e2);
    }
    COSIM_INPUT_CHECK(
        f.size() >= 5 && e1 != f[3].c_str() && *e1 == '\0' && e2 != f[4].c_str() && *e2 == '\0',
        errc::io,
        path + ":" + std::to_string(n) +
            ": expected step,t,subsystem,wakeup_latency_us,exec_us,... numbers, "
            "got '" +
            line + "'");
    auto& tt = out[f[2]];
    tt.wake_us.push_back(wake);
    tt.exec_us.push_back(exec);
  }
  return out;
}

std::string table_of(const std::vector<json_value>& rows) {
  std::vector<std::string> keys;
  for (const auto& r : rows)
    for (const auto& kv : r.obj)
      if (std::find(keys.begin(), keys.end(), kv.first) == keys.end()) keys.push_back(kv.first);
  if (keys.empty()) {
    std::string s = "<ul>";
    for (const auto& r : rows) s += "<li>" + escape(text_of(r)) + "</li>";
    return s + "</ul>";
  }
  std::string s = "<table><tr>";
  for (const auto& k : keys) s += "<th>" + escape(k) + "</th>";
  s += "</tr>";
  for (const auto& r : rows) {
    s += "<tr>";
    for (const auto& k : keys) {
      const json_value* v = r.find(k);
      std::string cell;
      if (v != nullptr) {
        if (v->k == jkind::object) {
          for (const auto& kv : v->obj) cell += kv.first + " " + kv.second.dump() + "  ";
        } else {
          cell = text_of(*v);
        }
      }
      s += "<td>" + escape(cell) + "</td>";
    }
    s += "</tr>";
  }
  return s + "</table>";
}

const char* const style = R"CSS(
body{font:14px system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:24px;border-bottom:1px solid #ccc}
svg{display:block;margin:6px 0}svg text{font:11px sans-serif}svg text.title{font-weight:bold;font-size:12px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;font-size:12px}
.status{font-size:16px;padding:6px 10px;display:inline-block;border-radius:4px}
.completed{background:#dfd}.stopped{background:#fdd}
pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}
)CSS";

}  // namespace

std::string make_report(const report_request& req) {
  const fs::path dir(req.dir);
  const std::string results_path = (dir / "results.csv").string();
  const std::string summary_path = (dir / "summary.json").string();
  const std::string timing_path = (dir / "timing.csv").string();
  // A folder without summary.json holds a run that did not finish (killed, crashed, power
  // cut): exactly when one wants the plots. Show what results.csv holds and say so.
  const bool finished = fs::exists(summary_path);
  json_value summary;
  summary.k = jkind::object;
  if (finished) summary = read_summary(summary_path);
  const csv_table res = read_csv(results_path);
  COSIM_INPUT_CHECK(!res.columns.empty() && res.columns[0] == "t", errc::io,
                    results_path + ": the first column must be the time t");

  std::optional<csv_table> other;
  std::string other_label;
  if (!req.reference.empty()) {
    other = read_csv(req.reference);
    other_label = "reference";
  } else if (!req.compare.empty()) {
    other = read_csv((fs::path(req.compare) / "results.csv").string());
    other_label = "compare";
  }

  const std::string status = string_at(summary, "status");
  const std::string stop_reason = string_at(summary, "stop_reason");
  const double stop_time = number_at(summary, {"stop_time_s"}).value_or(NAN);
  const double H = number_at(summary, {"config", "run", "macro_step"}).value_or(0.0);
  const std::optional<double> e_limit =
      number_at(summary, {"config", "safety", "energy_residual_limit"});
  const std::optional<double> p_limit =
      number_at(summary, {"config", "safety", "residual_power_limit"});

  // Columns as vectors over time.
  const std::size_t nc = res.columns.size();
  std::vector<std::vector<double>> col(nc);
  for (auto& c : col) c.reserve(res.rows.size());
  for (const auto& r : res.rows)
    for (std::size_t c = 0; c < nc; ++c) col[c].push_back(c < r.size() ? r[c] : NAN);
  const std::vector<double>& t = col[0];
  std::vector<double> other_t;
  if (other)
    for (const auto& r : other->rows) other_t.push_back(r.empty() ? NAN : r[0]);

  std::string h;
  h.reserve(1 << 20);
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>cosim report: " +
       escape(req.dir) + "</title><style>" + style + "</style></head><body>\n";
  h += "<h1>cosim report: " + escape(req.dir) + "</h1>\n";
  if (finished)
    h += "<p><span class=\"status " + std::string(status == "completed" ? "completed" : "stopped") +
         "\" id=\"status\">" + escape(status) + " (" + escape(stop_reason) +
         ") at t = " + num(stop_time) + " s</span></p>\n";
  else
    h += "<p><span class=\"status stopped\" id=\"status\">did not finish: " + escape(summary_path) +
         " is missing (the run was killed or crashed before writing it); the plots show the " +
         std::to_string(res.rows.size()) +
         " rows results.csv holds, up to t = " + num(t.empty() ? NAN : t.back()) +
         " s</span></p>\n";
  if (const std::string msg = string_at(summary, "message"); !msg.empty())
    h += "<p id=\"message\">" + escape(msg) + "</p>\n";
  if (!finished)
    std::fprintf(
        stderr,
        "cosim: warning: %s is missing: the run did not finish; reporting the %zu rows of %s\n",
        summary_path.c_str(), res.rows.size(), results_path.c_str());
  else
    h += "<p>mode " + escape(string_at(summary, "mode")) + ", " +
         num(number_at(summary, {"macro_steps"}).value_or(0)) + " macro steps, simulated " +
         num(number_at(summary, {"sim_time_s"}).value_or(NAN)) + " s in " +
         num(number_at(summary, {"wall_time_s"}).value_or(NAN)) + " s wall (real-time factor " +
         num(number_at(summary, {"real_time_factor"}).value_or(NAN)) + "); " +
         std::to_string(res.rows.size()) + " rows in " + escape(results_path) + "</p>\n";
  // Which software ran where and when (summary.json's provenance; absent in older summaries).
  if (const json_value* sw = summary.find("software")) {
    const json_value* host = summary.find("host");
    const auto field = [](const json_value* o, const char* k) {
      const json_value* v = o != nullptr ? o->find(k) : nullptr;
      return v != nullptr ? text_of(*v) : std::string("?");
    };
    h += "<p id=\"provenance\">cosim " + escape(field(sw, "version")) + " (commit " +
         escape(field(sw, "commit")) + ", " + escape(field(sw, "build_type")) + ", " +
         escape(field(sw, "compiler")) + ") on " + escape(field(host, "hostname")) + " (kernel " +
         escape(field(host, "kernel")) + ", PREEMPT_RT " + escape(field(host, "preempt_rt")) +
         ", " + escape(field(host, "cpu_model")) + "), started " +
         escape(string_at(summary, "started_at")) + "</p>\n";
  }
  // summary.json counts the rows the run wrote: fewer in results.csv means the file was cut
  // (a copy interrupted, a disk that filled later) or edited, and the plots end early.
  if (const std::optional<double> rows = number_at(summary, {"rows"});
      rows && *rows != static_cast<double>(res.rows.size())) {
    const std::string note = results_path + " holds " + std::to_string(res.rows.size()) +
                             " rows but " + summary_path + " counts " + num(*rows) +
                             " written by the run: the file was cut or changed after the run";
    std::fprintf(stderr, "cosim: warning: %s\n", note.c_str());
    h += "<p class=\"stopped\" id=\"rows-mismatch\">" + escape(note) + "</p>\n";
  }
  if (other) h += "<p>Overlaid (" + other_label + "): " + escape(other->path) + "</p>\n";

  // Energy residual and |dP| against the safety limits.
  h += "<h2>Energy residual</h2>\n";
  bool any_energy = false;
  for (std::size_t c = 1; c < nc; ++c) {
    const std::string& name = res.columns[c];
    if (name.rfind("sum_abs_dE", 0) == 0) {
      std::vector<hline> lim;
      if (e_limit)
        lim.push_back({*e_limit, "safety.energy_residual_limit " + num(*e_limit) + " J"});
      h += time_plot("energy-" + id_of(name), name + " [J]", {{&t, col[c], "#06c", name}}, lim,
                     stop_time);
      any_energy = true;
    } else if (name.rfind("dP", 0) == 0) {
      std::vector<double> a(col[c].size());
      std::transform(col[c].begin(), col[c].end(), a.begin(), [](double v) { return std::abs(v); });
      std::vector<hline> lim;
      if (p_limit) lim.push_back({*p_limit, "safety.residual_power_limit " + num(*p_limit) + " W"});
      h += time_plot("power-" + id_of(name), "|" + name + "| [W]",
                     {{&t, std::move(a), "#06c", "|" + name + "|"}}, lim, stop_time);
      any_energy = true;
    }
  }
  if (!any_energy) h += "<p>results.csv has no sum_abs_dE or dP column.</p>\n";

  // Alarms: limits from the configuration, how often each fired from the summary; their
  // min and max are drawn on their column's plot below.
  std::map<std::string, std::vector<hline>> alarm_lines;
  const json_value* cfg_alarms = summary.find("config");
  cfg_alarms = cfg_alarms != nullptr ? cfg_alarms->find("alarms") : nullptr;
  if (cfg_alarms != nullptr && cfg_alarms->k == jkind::array && !cfg_alarms->arr.empty()) {
    const json_value* fired = summary.find("alarms");
    h += "<h2>Alarms</h2>\n<table id=\"alarms\"><tr><th>alarm</th><th>variable</th><th>min</th>"
         "<th>max</th><th>rate_max [/s]</th><th>debounce [s]</th><th>action</th><th>fired</th>"
         "<th>first at t [s]</th></tr>";
    for (std::size_t i = 0; i < cfg_alarms->arr.size(); ++i) {
      const json_value& a = cfg_alarms->arr[i];
      const std::string name = string_at(a, "name");
      const std::string var = string_at(a, "variable");
      const auto limit = [&](const char* key) {
        const std::optional<double> v = number_at(a, {key});
        return v ? num(*v) : std::string("–");
      };
      for (const char* key : {"min", "max"})
        if (const std::optional<double> v = number_at(a, {key}))
          alarm_lines[var].push_back({*v, "alarm '" + name + "' " + key + " " + num(*v)});
      const json_value* f = fired != nullptr && fired->k == jkind::array && i < fired->arr.size()
                                ? &fired->arr[i]
                                : nullptr;
      const std::optional<double> count = f != nullptr ? number_at(*f, {"count"}) : std::nullopt;
      const std::optional<double> first =
          f != nullptr ? number_at(*f, {"first_time_s"}) : std::nullopt;
      h += "<tr><td>" + escape(name) + "</td><td>" + escape(var) + "</td><td>" + limit("min") +
           "</td><td>" + limit("max") + "</td><td>" + limit("rate_max") + "</td><td>" +
           limit("debounce") + "</td><td>" + escape(string_at(a, "action")) + "</td><td>" +
           (count ? num(*count) : "–") + "</td><td>" + (first ? num(*first) : "–") + "</td></tr>";
    }
    h += "</table>\n";
  }

  // Every recorded column, with the overlay and the difference on the run's times.
  h += "<h2>Recorded columns</h2>\n";
  // Units from summary.json (absent for an unfinished run or an older summary).
  const json_value* units = summary.find("units");
  for (std::size_t c = 1; c < nc; ++c) {
    const std::string& name = res.columns[c];
    const std::string unit = units != nullptr ? string_at(*units, name.c_str()) : "";
    std::vector<series> lines{{&t, col[c], "#06c", "run"}};
    const int oc = other ? other->column(name) : -1;
    if (oc >= 0) {
      std::vector<double> oy;
      oy.reserve(other->rows.size());
      for (const auto& r : other->rows)
        oy.push_back(static_cast<std::size_t>(oc) < r.size() ? r[static_cast<std::size_t>(oc)]
                                                             : NAN);
      lines.push_back({&other_t, std::move(oy), "#e60", other_label});
    }
    const auto lim = alarm_lines.find(name);
    h += time_plot("col-" + id_of(name), unit.empty() ? name : name + " [" + unit + "]", lines,
                   lim != alarm_lines.end() ? lim->second : std::vector<hline>{}, stop_time);
    if (oc >= 0 && !other->rows.empty()) {
      const double lo = other->rows.front()[0], hi = other->rows.back()[0];
      std::vector<double> d(t.size(), NAN);
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t[i] >= lo && t[i] <= hi) d[i] = col[c][i] - other->interpolate(oc, t[i]);
      h += time_plot("diff-" + id_of(name),
                     name + (unit.empty() ? "" : " [" + unit + "]") + ": run - " + other_label +
                         " (" + other_label + " interpolated to the run's times)",
                     {{&t, std::move(d), "#a0a", "difference"}}, {}, stop_time);
    }
  }

  // Timing: per-thread histograms with the deadline.
  h += "<h2>Thread timing</h2>\n";
  if (fs::exists(timing_path)) {
    const auto timing = read_timing(timing_path);
    const double deadline_us = H * 1e6;
    for (const auto& [name, tt] : timing) {
      h += histogram("wake-" + id_of(name), name + ": wake-up latency [us]", tt.wake_us,
                     deadline_us);
      h += histogram("exec-" + id_of(name), name + ": step time [us]", tt.exec_us, deadline_us);
    }
  } else {
    h += "<p>No timing.csv in this folder: set run.timing_csv = true (threaded or realtime "
         "mode) for per-step wake-up latency and step-time histograms.</p>\n";
  }

  // Counters: the summary's scalars and tables.
  h += "<h2>Counters</h2>\n<table id=\"counters\">";
  for (const auto& [key, v] : summary.obj) {
    if (v.k == jkind::object || v.k == jkind::array) continue;
    h += "<tr><th>" + escape(key) + "</th><td>" + escape(text_of(v)) + "</td></tr>";
  }
  h += "</table>\n";
  for (const auto& [key, v] : summary.obj) {
    if (key == "config") continue;
    if (v.k == jkind::array) {
      if (v.arr.empty()) continue;
      h += "<h3>" + escape(key) + "</h3>\n" + table_of(v.arr) + "\n";
    } else if (v.k == jkind::object) {
      std::string body;
      pretty(v, body, 0);
      h += "<h3>" + escape(key) + "</h3>\n<pre>" + escape(body) + "</pre>\n";
    }
  }

  h += "<h2>Configuration</h2>\n<pre id=\"config\">";
  if (const json_value* cfg = summary.find("config")) {
    std::string body;
    pretty(*cfg, body, 0);
    h += escape(body);
  }
  h += "</pre>\n</body></html>\n";
  return h;
}

std::string write_report(const report_request& req) {
  const std::string html = make_report(req);  // every input read before anything is written
  // Never through a symbolic link (results_folder.hpp), synced like the summary.
  config::write_file_atomically(req.dir, "report.html", html);
  const fs::path target = fs::path(req.dir) / "report.html";
  return target.string();
}

}  // namespace cosim::cli
