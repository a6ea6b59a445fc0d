# frozen_string_literal: true

require "bigdecimal"
require "date"
require_relative "money"
require_relative "errors"

module Billing
  # Plans a customer can subscribe to. Prices are monthly, in cents.
  PLANS = {
    "starter" => { price_cents: 900, seats: 3, trial_days: 14 },
    "team" => { price_cents: 2900, seats: 10, trial_days: 14 },
    "business" => { price_cents: 9900, seats: 50, trial_days: 30 },
  }.freeze

  class PlanNotFound < StandardError; end
  class InvalidTransition < StandardError; end

  # A customer's subscription and its state machine:
  # trialing -> active -> past_due -> canceled, with pause/resume while active.
  class Subscription
    STATES = %i[trialing active paused past_due canceled].freeze
    TRANSITIONS = {
      trialing: %i[active canceled],
      active: %i[paused past_due canceled],
      paused: %i[active canceled],
      past_due: %i[active canceled],
      canceled: [],
    }.freeze

    attr_reader :customer_id, :plan, :state, :seats, :started_on, :current_period_end
    attr_accessor :coupon

    def initialize(customer_id:, plan:, seats: 1, started_on: Date.today)
      raise PlanNotFound, plan unless PLANS.key?(plan)

      @customer_id = customer_id
      @plan = plan
      @seats = seats
      @started_on = started_on
      @state = :trialing
      @current_period_end = started_on + PLANS.fetch(plan)[:trial_days]
      @history = []
    end

    def trial?
      state == :trialing
    end

    def active?
      %i[active trialing].include?(state)
    end

    def transition_to(new_state, at: Date.today)
      allowed = TRANSITIONS.fetch(state)
      unless allowed.include?(new_state)
        raise InvalidTransition, "#{state} -> #{new_state} is not allowed"
      end

      @history << { from: state, to: new_state, at: at }
      @state = new_state
      self
    end

    def change_plan(new_plan, on: Date.today)
      raise PlanNotFound, new_plan unless PLANS.key?(new_plan)
      return self if new_plan == plan

      credit = unused_credit(on)
      @plan = new_plan
      @pending_credit = credit
      self
    end

    def unused_credit(on)
      return Money.zero if trial? || on >= current_period_end

      days_left = (current_period_end - on).to_i
      daily = Money.from_cents(monthly_price_cents) / 30
      daily * days_left
    end

    def monthly_price_cents
      base = PLANS.fetch(plan)[:price_cents]
      extra_seats = [seats - PLANS.fetch(plan)[:seats], 0].max
      total = base + extra_seats * (base / 10)
      coupon ? coupon.apply(total) : total
    end

    def history
      @history.dup
    end
  end

  # Turns subscriptions into invoices at the end of each period.
  class InvoiceRun
    Line = Struct.new(:description, :amount_cents, keyword_init: true)
    Invoice = Struct.new(:customer_id, :period_end, :lines, keyword_init: true) do
      def total_cents
        lines.sum(&:amount_cents)
      end
    end

    def initialize(subscriptions, gateway:, clock: -> { Date.today })
      @subscriptions = subscriptions
      @gateway = gateway
      @clock = clock
    end

    def due
      today = @clock.call
      @subscriptions.select { |s| s.active? && s.current_period_end <= today }
    end

    def call
      due.each_with_object([]) do |subscription, invoices|
        invoice = build_invoice(subscription)
        begin
          @gateway.charge(subscription.customer_id, invoice.total_cents)
          subscription.transition_to(:active) if subscription.trial?
        rescue Errors::CardDeclined => e
          subscription.transition_to(:past_due)
          notify_declined(subscription, e)
        end
        invoices << invoice
      end
    end

    private

    def build_invoice(subscription)
      lines = [
        Line.new(description: "#{subscription.plan} plan", amount_cents: subscription.monthly_price_cents),
      ]
      if subscription.coupon
        lines << Line.new(description: "coupon #{subscription.coupon.code}", amount_cents: 0)
      end
      Invoice.new(customer_id: subscription.customer_id, period_end: @clock.call, lines: lines)
    end

    def notify_declined(subscription, error)
      case error.reason
      when :insufficient_funds
        Mailer.deliver(:retry_later, subscription.customer_id)
      when :expired_card
        Mailer.deliver(:update_card, subscription.customer_id)
      else
        Mailer.deliver(:payment_failed, subscription.customer_id, error.message)
      end
    end
  end

  def self.plan_price(plan)
    PLANS.fetch(plan) { raise PlanNotFound, plan }[:price_cents]
  end
end
