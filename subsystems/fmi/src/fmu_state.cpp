// Rollback of an FMU subsystem for iterative coupling (see fmu_subsystem.hpp): one FMU state
// handle, allocated by the FMU before the run and overwritten at every save (FMI 2.0
// Sect. 2.1.8, FMI 3.0 Sect. 2.2.6.4).
#include <algorithm>
#include <string>

#include "cosim/fmi/fmu_subsystem.hpp"
#include "fmu_instance.hpp"

namespace cosim::fmi {

std::string fmu_subsystem::state_refusal() const {
  const bool declared = description().cosim && description().cosim->can_get_and_set_fmu_state;
  const char* flag = names_->state_flag;
  if (!declared)
    return "FMU '" + where_ + "' does not declare " + flag +
           " in its modelDescription.xml (it cannot save and restore its state)";
  return "FMU '" + where_ + "' declares " + flag + ", but its binary does not export " +
         api_->missing_state;
}

bool fmu_subsystem::do_can_save_state() const noexcept {
  return description().cosim && description().cosim->can_get_and_set_fmu_state &&
         api_->missing_state.empty();
}

void fmu_subsystem::do_prepare_state() {
  rollback_ = true;
  saved_values_.assign(values_.size(), 0.0);
  if (fmu_state_ != nullptr) return;
  if (phase_ != phase::instantiated && phase_ != phase::initialized)
    throw_error("cannot save its state: the FMU is not running");
  // *state == NULL: the FMU allocates the state here, before the run; saves reuse it.
  const int st = inst_->get_state(&fmu_state_);
  if (st > fmi2Warning) {
    note_status(st);
    throw_error(std::string(names_->get_state) +
                " (allocating the state for iterative coupling) returned " +
                inst_->status_text(st));
  }
  if (fmu_state_ == nullptr) throw_error(std::string(names_->get_state) + " returned no state");
}

bool fmu_subsystem::do_save_state() noexcept {
  // Saved at the start of a macro step: one after the FMU ended is not taken.
  if (end_pending_) return refuse_step();
  if (phase_ != phase::initialized || stop_ != fmu_stop::none || fmu_state_ == nullptr)
    return false;
  const int st = inst_->get_state(&fmu_state_);
  if (st > fmi2Warning) {
    note_status(st);
    return fail(fmu_stop::failed, names_->save_state, st, fmu_time(comm_t_));
  }
  std::copy(values_.begin(), values_.end(), saved_values_.begin());
  saved_t_ = comm_t_;
  return true;
}

bool fmu_subsystem::do_restore_state() noexcept {
  if (phase_ != phase::initialized || stop_ != fmu_stop::none || fmu_state_ == nullptr)
    return false;
  const int st = inst_->set_state(fmu_state_);
  if (st > fmi2Warning) {
    note_status(st);
    return fail(fmu_stop::failed, names_->restore_state, st, fmu_time(saved_t_));
  }
  std::copy(saved_values_.begin(), saved_values_.end(), values_.begin());
  comm_t_ = saved_t_;
  der_fetched_ = false;
  // The FMU's inputs are those of the saved state now: the next step sends every one.
  inputs_sent_ = false;
  return true;
}

}  // namespace cosim::fmi
