//===- Record.cpp - Finished runs kept on disk ----------------------------===//

#include "fp8/Train/Record.h"

#include "fp8/Train/Run.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::train;
namespace json = llvm::json;

std::string train::recordPath(StringRef dir, const Run &run) {
  SmallString<256> path(dir);
  llvm::sys::path::append(path, run.recipe.label + ".seed" +
                                    std::to_string(run.seed) + ".json");
  return std::string(path);
}

/// JSON has no inf or NaN; the record keeps them as strings (a diverged
/// run's losses are NaN, and must come back as NaN).
static json::Value number(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return value;
}

static std::optional<double> number(const json::Value *value) {
  if (!value)
    return std::nullopt;
  if (std::optional<double> v = value->getAsNumber())
    return v;
  std::optional<StringRef> text = value->getAsString();
  if (!text)
    return std::nullopt;
  if (*text == "nan")
    return std::numeric_limits<double>::quiet_NaN();
  if (*text == "inf")
    return std::numeric_limits<double>::infinity();
  if (*text == "-inf")
    return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

/// The steps whose per-tensor statistics a record keeps: the first and the
/// validation steps (all of them, step by step, would make a 1000-step run's
/// record megabytes).
static llvm::DenseSet<uint64_t> keptTensorSteps(const Run &run) {
  llvm::DenseSet<uint64_t> steps = {run.firstStep};
  for (const Run::Row &row : run.rows)
    if (!std::isnan(row.valLoss))
      steps.insert(row.step);
  return steps;
}

LogicalResult train::saveRecord(StringRef dir, StringRef key, const Run &run,
                                std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create '" + dir.str() + "': " + ec.message();
    return failure();
  }
  json::Array rows, tensorRows, events;
  for (const Run::Row &row : run.rows)
    rows.push_back(json::Array{int64_t(row.step), number(row.loss),
                               number(row.gradNorm), number(row.valLoss),
                               number(row.seconds)});
  llvm::DenseSet<uint64_t> keptSteps = keptTensorSteps(run);
  for (const Run::TensorRow &row : run.tensorRows)
    if (keptSteps.contains(row.step))
      tensorRows.push_back(json::Array{
          int64_t(row.step), row.tensor, number(row.amax), number(row.scale),
          number(row.saturated), number(row.flushed), number(row.kurtosis)});
  for (const std::string &event : run.events)
    events.push_back(event);
  json::Object record{
      {"key", key},
      {"label", run.recipe.label},
      {"seed", int64_t(run.seed)},
      {"name", run.name},
      {"first_step", int64_t(run.firstStep)},
      {"last_step", int64_t(run.lastStep)},
      {"stopped", run.stopped},
      {"final_loss", number(run.finalLoss)},
      {"final_val_loss", number(run.finalValLoss)},
      {"final_val_stderr", number(run.finalValStdErr)},
      {"amax_collectives", int64_t(run.amaxCollectives)},
      {"rows", std::move(rows)},
      {"tensor_rows", std::move(tensorRows)},
      {"events", std::move(events)},
  };

  std::string path = recordPath(dir, run);
  std::string partial = path + ".partial";
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(partial, ec);
    if (!ec) {
      os << json::Value(std::move(record)) << "\n";
      os.close();
      ec = os.error();
      os.clear_error();
    }
  }
  if (!ec)
    ec = llvm::sys::fs::rename(partial, path);
  if (ec) {
    (void)llvm::sys::fs::remove(partial);
    error = "cannot write the record '" + path + "': " + ec.message();
    return failure();
  }
  return success();
}

FailureOr<bool> train::loadRecord(StringRef dir, StringRef key, Run &run,
                                  std::string &error) {
  std::string path = recordPath(dir, run);
  if (!llvm::sys::fs::exists(path))
    return false;
  auto malformed = [&](const Twine &why) -> FailureOr<bool> {
    error = ("the record '" + path + "' is malformed: " + why).str();
    return failure();
  };
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read the record '" + path +
            "': " + buffer.getError().message();
    return failure();
  }
  llvm::Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
  if (!parsed)
    return malformed(llvm::toString(parsed.takeError()));
  const json::Object *record = parsed->getAsObject();
  if (!record)
    return malformed("not an object");
  std::optional<StringRef> recordKey = record->getString("key");
  if (!recordKey)
    return malformed("no key");
  if (*recordKey != key)
    return false;

  std::optional<int64_t> seed = record->getInteger("seed"),
                         firstStep = record->getInteger("first_step"),
                         lastStep = record->getInteger("last_step"),
                         collectives = record->getInteger("amax_collectives");
  std::optional<bool> stopped = record->getBoolean("stopped");
  std::optional<StringRef> name = record->getString("name");
  std::optional<double> finalLoss = number(record->get("final_loss")),
                        finalValLoss = number(record->get("final_val_loss")),
                        finalValStdErr = number(record->get("final_val_stderr"));
  const json::Array *rows = record->getArray("rows"),
                    *tensorRows = record->getArray("tensor_rows"),
                    *events = record->getArray("events");
  if (!seed || !firstStep || !lastStep || !collectives || !stopped || !name ||
      !finalLoss || !finalValLoss || !finalValStdErr || !rows || !tensorRows ||
      !events)
    return malformed("a field is missing or has the wrong type");
  if (uint64_t(*seed) != run.seed)
    return malformed("it is the record of seed " + Twine(*seed));

  std::vector<Run::Row> loadedRows;
  for (const json::Value &value : *rows) {
    const json::Array *row = value.getAsArray();
    if (!row || row->size() != 5)
      return malformed("a row is not [step, loss, grad norm, val loss, s]");
    std::optional<int64_t> step = (*row)[0].getAsInteger();
    std::optional<double> loss = number(&(*row)[1]),
                          gradNorm = number(&(*row)[2]),
                          valLoss = number(&(*row)[3]),
                          seconds = number(&(*row)[4]);
    if (!step || !loss || !gradNorm || !valLoss || !seconds)
      return malformed("a row is not [step, loss, grad norm, val loss, s]");
    loadedRows.push_back({uint64_t(*step), *loss, *gradNorm, *valLoss,
                          *seconds});
  }
  std::vector<Run::TensorRow> loadedTensorRows;
  for (const json::Value &value : *tensorRows) {
    const json::Array *row = value.getAsArray();
    std::optional<int64_t> step;
    std::optional<StringRef> tensor;
    std::optional<double> fields[5];
    if (row && row->size() == 7) {
      step = (*row)[0].getAsInteger();
      tensor = (*row)[1].getAsString();
      for (unsigned i = 0; i < 5; ++i)
        fields[i] = number(&(*row)[2 + i]);
    }
    if (!step || !tensor ||
        !llvm::all_of(fields, [](auto &f) { return f.has_value(); }))
      return malformed("a tensor row is not [step, tensor, amax, scale, "
                       "saturated, flushed, kurtosis]");
    loadedTensorRows.push_back({uint64_t(*step), tensor->str(), *fields[0],
                                *fields[1], *fields[2], *fields[3],
                                *fields[4]});
  }
  std::vector<std::string> loadedEvents;
  for (const json::Value &value : *events) {
    std::optional<StringRef> event = value.getAsString();
    if (!event)
      return malformed("an event is not a string");
    loadedEvents.push_back(event->str());
  }

  run.name = name->str();
  run.firstStep = *firstStep;
  run.lastStep = *lastStep;
  run.stopped = *stopped;
  run.finalLoss = *finalLoss;
  run.finalValLoss = *finalValLoss;
  run.finalValStdErr = *finalValStdErr;
  run.amaxCollectives = *collectives;
  run.rows = std::move(loadedRows);
  run.tensorRows = std::move(loadedTensorRows);
  run.events = std::move(loadedEvents);
  return true;
}
